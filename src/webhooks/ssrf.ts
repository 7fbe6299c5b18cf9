// Server-side request forgery: a webhook URL must not make the service call into its own network
// (OWASP SSRF prevention cheat sheet). Judged twice: when an endpoint is saved (every address the
// host resolves to), and at each delivery on the address actually connected to (the http agent's
// lookup refuses before connecting, and the socket's remote address is checked once connected), so a
// name that resolves to a public address at saving and to a private one later (DNS rebinding) is
// refused. Redirects are never followed (src/webhooks/sender.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface SpecialPurposeBlock {
  readonly range: string;
  readonly name: string;
  /** IANA's "Globally Reachable"; null where IANA gives none (N/A, or emptied when the block was withdrawn). */
  readonly globallyReachable: boolean | null;
}

/**
 * Every block of the IANA IPv4 Special-Purpose Address Registry (iana-ipv4-special-registry) and of
 * the IANA IPv6 Special-Purpose Address Registry (iana-ipv6-special-registry), RFC 6890, as IANA lists
 * them since April 2025 (their newest block: 100:0:0:1::/64, RFC 9780, 2025-04); read them again
 * when touching this table. test/webhooks-delivery.test.ts holds its own transcription and compares.
 *
 * No address in these blocks is public, not even where IANA says "Globally Reachable: True": those
 * are anycast services (PCP, TURN, DNS-SD SRP, AMT relays, AS112), answered by their nearest
 * instance, which may be run by the service's own network, or identifiers that no host listens on
 * (ORCHIDv2, drone DETs); no partner's receiver lives there. The one exception is the NAT64
 * well-known prefix 64:ff9b::/96, judged by the IPv4 address it carries (EMBEDDED, below).
 */
export const SPECIAL_PURPOSE: readonly SpecialPurposeBlock[] = [
  { range: '0.0.0.0/8', name: '"This network"', globallyReachable: false },
  { range: '0.0.0.0/32', name: '"This host on this network"', globallyReachable: false },
  { range: '10.0.0.0/8', name: 'Private-Use', globallyReachable: false },
  { range: '100.64.0.0/10', name: 'Shared Address Space', globallyReachable: false },
  { range: '127.0.0.0/8', name: 'Loopback', globallyReachable: false },
  { range: '169.254.0.0/16', name: 'Link Local', globallyReachable: false },
  { range: '172.16.0.0/12', name: 'Private-Use', globallyReachable: false },
  { range: '192.0.0.0/24', name: 'IETF Protocol Assignments', globallyReachable: false },
  { range: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', globallyReachable: false },
  { range: '192.0.0.8/32', name: 'IPv4 dummy address', globallyReachable: false },
  { range: '192.0.0.9/32', name: 'Port Control Protocol Anycast', globallyReachable: true },
  { range: '192.0.0.10/32', name: 'Traversal Using Relays around NAT Anycast', globallyReachable: true },
  { range: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', globallyReachable: false },
  { range: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', globallyReachable: false },
  { range: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', globallyReachable: false },
  { range: '192.31.196.0/24', name: 'AS112-v4', globallyReachable: true },
  { range: '192.52.193.0/24', name: 'AMT', globallyReachable: true },
  { range: '192.88.99.0/24', name: 'Deprecated (6to4 Relay Anycast)', globallyReachable: null },
  { range: '192.88.99.2/32', name: '6a44-relay anycast address', globallyReachable: false },
  { range: '192.168.0.0/16', name: 'Private-Use', globallyReachable: false },
  { range: '192.175.48.0/24', name: 'Direct Delegation AS112 Service', globallyReachable: true },
  { range: '198.18.0.0/15', name: 'Benchmarking', globallyReachable: false },
  { range: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', globallyReachable: false },
  { range: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', globallyReachable: false },
  { range: '240.0.0.0/4', name: 'Reserved', globallyReachable: false },
  { range: '255.255.255.255/32', name: 'Limited Broadcast', globallyReachable: false },
  { range: '::1/128', name: 'Loopback Address', globallyReachable: false },
  { range: '::/128', name: 'Unspecified Address', globallyReachable: false },
  { range: '::ffff:0:0/96', name: 'IPv4-mapped Address', globallyReachable: false },
  { range: '64:ff9b::/96', name: 'IPv4-IPv6 Translat.', globallyReachable: true },
  { range: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', globallyReachable: false },
  { range: '100::/64', name: 'Discard-Only Address Block', globallyReachable: false },
  { range: '100:0:0:1::/64', name: 'Dummy IPv6 Prefix', globallyReachable: false },
  { range: '2001::/23', name: 'IETF Protocol Assignments', globallyReachable: false },
  { range: '2001::/32', name: 'TEREDO', globallyReachable: null },
  { range: '2001:1::1/128', name: 'Port Control Protocol Anycast', globallyReachable: true },
  { range: '2001:1::2/128', name: 'Traversal Using Relays around NAT Anycast', globallyReachable: true },
  { range: '2001:1::3/128', name: 'DNS-SD Service Registration Protocol Anycast', globallyReachable: true },
  { range: '2001:2::/48', name: 'Benchmarking', globallyReachable: false },
  { range: '2001:3::/32', name: 'AMT', globallyReachable: true },
  { range: '2001:4:112::/48', name: 'AS112-v6', globallyReachable: true },
  { range: '2001:10::/28', name: 'Deprecated (previously ORCHID)', globallyReachable: null },
  { range: '2001:20::/28', name: 'ORCHIDv2', globallyReachable: true },
  { range: '2001:30::/28', name: 'Drone Remote ID Protocol Entity Tags (DETs) Prefix', globallyReachable: true },
  { range: '2001:db8::/32', name: 'Documentation', globallyReachable: false },
  { range: '2002::/16', name: '6to4', globallyReachable: null },
  { range: '2620:4f:8000::/48', name: 'Direct Delegation AS112 Service', globallyReachable: true },
  { range: '3fff::/20', name: 'Documentation', globallyReachable: false },
  { range: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', globallyReachable: false },
  { range: 'fc00::/7', name: 'Unique-Local', globallyReachable: false },
  { range: 'fe80::/10', name: 'Link-Local Unicast', globallyReachable: false },
];

type Block<A> = [A, number];
const v4 = (range: string): Block<ipaddr.IPv4> => ipaddr.IPv4.parseCIDR(range);
const v6 = (range: string): Block<ipaddr.IPv6> => ipaddr.IPv6.parseCIDR(range);
const SPECIAL_V4 = SPECIAL_PURPOSE.filter((b) => !b.range.includes(':')).map((b) => v4(b.range));
const SPECIAL_V6 = SPECIAL_PURPOSE.filter((b) => b.range.includes(':')).map((b) => v6(b.range));

// Beyond the special-purpose registries: IPv4 multicast (IANA IPv4 Multicast Address Space
// registry), and any IPv6 address outside 2000::/3, the only global unicast allocation of the IANA
// IPv6 Address Space registry (the rest: reserved by the IETF, unique-local, link-local, the
// deprecated site-local fec0::/10, multicast).
const MULTICAST_V4 = v4('224.0.0.0/4');
const GLOBAL_UNICAST_V6 = v6('2000::/3');

/**
 * Cloud metadata services, refused even with WEBHOOKS_ALLOW_PRIVATE_URLS: link-local as a whole
 * (169.254.169.254 of AWS, GCP, Azure, OpenStack; 169.254.170.2 of ECS; fe80::/10), AWS's IPv6
 * fd00:ec2::254 and Alibaba's 100.100.100.200.
 */
// Also Azure's WireServer (168.63.129.16, a public address every Azure VM reaches) and Oracle
// Cloud's metadata service (192.0.0.192).
const METADATA_V4 = [v4('169.254.0.0/16'), v4('100.100.100.200/32'), v4('168.63.129.16/32'), v4('192.0.0.192/32')];
const METADATA_V6 = [v6('fe80::/10'), v6('fd00:ec2::254/128')];

/** The IPv4 address held by the two 16-bit groups of `address` from `group` on. */
const ipv4At = (address: ipaddr.IPv6, group: number, invert = false) =>
  new ipaddr.IPv4([address.parts[group]!, address.parts[group + 1]!].flatMap((p) => [p >> 8, p & 0xff]).map((o) => (invert ? o ^ 0xff : o)));

/**
 * IPv6 forms that carry an IPv4 address. `reaches`: a connection to the IPv6 form is one to the IPv4
 * address, so it is judged as that address. The others are never public; they are metadata when the
 * IPv4 address is, so that WEBHOOKS_ALLOW_PRIVATE_URLS opens no way to it.
 */
const EMBEDDED: { block: Block<ipaddr.IPv6>; ipv4: (a: ipaddr.IPv6) => ipaddr.IPv4; reaches: boolean }[] = [
  // IPv4-mapped (::ffff:a.b.c.d): a dual-stack socket connects to a.b.c.d itself.
  { block: v6('::ffff:0:0/96'), ipv4: (a) => ipv4At(a, 6), reaches: true },
  // NAT64, well-known prefix (RFC 6052): the translator connects to a.b.c.d, which must itself be
  // public (RFC 6052 keeps non-global IPv4 addresses out of this prefix; an attacker would not).
  { block: v6('64:ff9b::/96'), ipv4: (a) => ipv4At(a, 6), reaches: true },
  // IPv4-compatible (::a.b.c.d, deprecated by RFC 4291, no one's address): what a stack does with
  // one varies (automatic tunnels sent it to a.b.c.d); `https://[::127.0.0.1]/` is no webhook.
  { block: v6('::/96'), ipv4: (a) => ipv4At(a, 6), reaches: false },
  // IPv4-translated (::ffff:0:a.b.c.d, SIIT): a translator of the service's own network.
  { block: v6('::ffff:0:0:0/96'), ipv4: (a) => ipv4At(a, 6), reaches: false },
  // NAT64, local-use prefix (RFC 8215): the operator's own translator (read at the /96 position;
  // shorter RFC 6052 prefixes hold the address elsewhere, and stay plain private).
  { block: v6('64:ff9b:1::/48'), ipv4: (a) => ipv4At(a, 6), reaches: false },
  // 6to4 (2002:aabb:ccdd::/48, IANA: N/A): tunnelled in IPv4 to the router at a.b.c.d, through
  // relays that RFC 7526 deprecated; no receiver depends on it.
  { block: v6('2002::/16'), ipv4: (a) => ipv4At(a, 1), reaches: false },
  // Teredo (2001::/32, IANA: N/A): through a relay to the client's IPv4 address, held inverted in the
  // last 32 bits; a host behind a NAT, not a server.
  { block: v6('2001::/32'), ipv4: (a) => ipv4At(a, 6, true), reaches: false },
];

export type AddressVerdict = 'public' | 'private' | 'metadata';

/**
 * What an address is: public only outside every special-purpose block (SPECIAL_PURPOSE), outside
 * multicast, and, for IPv6, inside global unicast 2000::/3; IPv6 forms carrying an IPv4 address as
 * EMBEDDED says.
 */
export function classifyAddress(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(hexTail(address.replace(/^\[|\]$/g, '').replace(/%.*$/, '')));
  } catch {
    return 'private';
  }
  return parsed.kind() === 'ipv4' ? classifyIPv4(parsed as ipaddr.IPv4) : classifyIPv6(parsed as ipaddr.IPv6);
}

/**
 * An IPv6 address with its dotted IPv4 tail in hex (::127.0.0.1 as ::7f00:1): ipaddr.js 1.9.1 reads
 * a dotted tail only after ::ffff:, and inet_ntop (dns.lookup's answers, a socket's remote address)
 * writes ::a.b.c.d too.
 */
function hexTail(address: string): string {
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (!tail || !ipaddr.IPv4.isValidFourPartDecimal(tail[2]!)) return address;
  const [a, b, c, d] = ipaddr.IPv4.parse(tail[2]!).octets as [number, number, number, number];
  return `${tail[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

function classifyIPv4(address: ipaddr.IPv4): AddressVerdict {
  if (METADATA_V4.some((b) => address.match(b))) return 'metadata';
  return address.match(MULTICAST_V4) || SPECIAL_V4.some((b) => address.match(b)) ? 'private' : 'public';
}

function classifyIPv6(address: ipaddr.IPv6): AddressVerdict {
  if (METADATA_V6.some((b) => address.match(b))) return 'metadata';
  const embedded = EMBEDDED.find((e) => address.match(e.block));
  if (embedded) {
    const verdict = classifyIPv4(embedded.ipv4(address));
    return embedded.reaches || verdict === 'metadata' ? verdict : 'private';
  }
  return !address.match(GLOBAL_UNICAST_V6) || SPECIAL_V6.some((b) => address.match(b)) ? 'private' : 'public';
}

export interface UrlPolicy {
  /** WEBHOOKS_ALLOW_PRIVATE_URLS: plain http and private addresses allowed (metadata never). */
  allowPrivate: boolean;
}

export function addressAllowed(address: string, policy: UrlPolicy): boolean {
  const verdict = classifyAddress(address);
  return verdict === 'public' || (verdict === 'private' && policy.allowPrivate);
}

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
  readonly code = 'address_refused';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.Agent / net.connect: resolves as usual, and fails when any address of the
 * name is refused (an attacker's name answering one public and one private address gets nowhere).
 */
export function guardedLookup(policy: UrlPolicy) {
  return (hostname: string, options: { all?: boolean; family?: number } | number, callback: LookupCallback): void => {
    const family = typeof options === 'number' ? options : (options.family ?? 0);
    dnsLookup(hostname, { all: true, family }, (err, addresses) => {
      if (err) return callback(err, '');
      const refused = addresses.find((a) => !addressAllowed(a.address, policy));
      if (refused || addresses.length === 0) return callback(new RefusedAddressError(`${hostname} resolves to a refused address`), '');
      if (typeof options === 'object' && options.all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Why a URL may not be an endpoint's, or null when it may. Resolves the host (every address must pass). */
export async function urlRefusal(value: string, policy: UrlPolicy): Promise<string | null> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not a URL';
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && policy.allowPrivate)) return 'must use https';
  if (url.username || url.password) return 'may not hold a user name or password';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host)
    ? [host]
    : await new Promise<string[]>((resolve) => dnsLookup(host, { all: true }, (err, found) => resolve(err ? [] : found.map((a) => a.address))));
  if (addresses.length === 0) return 'has a host name that does not resolve';
  const refused = addresses.find((a) => !addressAllowed(a, policy));
  if (refused) return `resolves to ${refused}, an address that is not public (private, special-purpose or metadata)`;
  return null;
}
