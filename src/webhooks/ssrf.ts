// Server-side request forgery: a webhook URL must not make the service call into its own network
// (OWASP SSRF prevention cheat sheet). Judged twice: when an endpoint is saved (every address the
// host resolves to), and at each delivery on the address actually connected to (the http agent's
// lookup refuses before connecting, and the socket's remote address is checked once connected), so a
// name that resolves to a public address at saving and to a private one later (DNS rebinding) is
// refused. Redirects are never followed (src/webhooks/sender.ts).
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Cloud metadata services, refused even with WEBHOOKS_ALLOW_PRIVATE_URLS: link-local as a whole
 * (169.254.169.254 of AWS, GCP, Azure, OpenStack; 169.254.170.2 of ECS; fe80::/10), AWS's IPv6
 * fd00:ec2::254 and Alibaba's 100.100.100.200.
 */
const METADATA = ['fd00:ec2::254', '100.100.100.200'];

export type AddressVerdict = 'public' | 'private' | 'metadata';

/** What an address is: only `unicast` (ipaddr.js: none of loopback, private, link-local, CGNAT, ULA, ... ) is public. */
export function classifyAddress(address: string): AddressVerdict {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'private';
  }
  // An IPv4-mapped IPv6 address (::ffff:10.0.0.1) is the IPv4 address.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  const normal = parsed.toNormalizedString();
  if (parsed.range() === 'linkLocal' || METADATA.some((m) => ipaddr.parse(m).toNormalizedString() === normal)) return 'metadata';
  return parsed.range() === 'unicast' ? 'public' : 'private';
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
  if (refused) return `resolves to ${refused}, an address that is not public (loopback, private, link-local, shared or metadata)`;
  return null;
}
