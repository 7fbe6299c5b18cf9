// A key's IP allowlist: up to 100 addresses or CIDR ranges, IPv4 and IPv6. An IPv4-mapped IPv6
// address (`::ffff:192.0.2.1`, a dual-stack socket's view of an IPv4 client) counts as its IPv4
// address, in the list and in the request, as the sign-in throttle counts it.
import ipaddr from 'ipaddr.js';
import { validationFailed, type FieldError } from '../errors.js';

export const MAX_ALLOWED_IPS = 100;

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** An IPv4-mapped range (prefix ≥ 96) as the IPv4 range it is; any other range unchanged. */
function unmapped([address, bits]: Range): Range {
  if (address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    return [(address as ipaddr.IPv6).toIPv4Address(), bits - 96];
  }
  return [address, bits];
}

/** One entry as a range; a bare address is a range of one. Undefined when it is neither. */
function parseEntry(entry: string): Range | undefined {
  try {
    if (entry.includes('/')) return unmapped(ipaddr.parseCIDR(entry) as Range);
    const address = ipaddr.parse(entry);
    return unmapped([address, address.kind() === 'ipv4' ? 32 : 128]);
  } catch {
    return undefined;
  }
}

/** The network address of a range: the address with every bit right of the prefix cleared. */
function networkOf([address, bits]: Range): string {
  const bytes = address.toByteArray();
  for (let i = 0; i < bytes.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    bytes[i]! &= (0xff << (8 - keep)) & 0xff;
  }
  return ipaddr.fromByteArray(bytes).toString();
}

const written = (range: Range) => {
  const full = range[0].kind() === 'ipv4' ? 32 : 128;
  return range[1] === full ? range[0].toString() : `${range[0].toString()}/${range[1]}`;
};

/**
 * The list as stored: each entry in its canonical form (`192.0.2.1`, `2001:db8::/32`), without
 * repeats. A malformed entry, or a range with bits set right of its prefix (`192.0.2.5/24`: which
 * was meant?), is a 400 naming the entry's position.
 */
export function normalizeAllowedIps(list: readonly string[]): string[] {
  const errors: FieldError[] = [];
  const out = new Set<string>();
  list.forEach((entry, i) => {
    const range = parseEntry(entry);
    const location = `request/body/allowed_ips/${i}`;
    if (!range) errors.push({ location, message: `${JSON.stringify(entry)} is not an IP address or a CIDR range`, error_code: 'format' });
    else if (networkOf(range) !== range[0].toString()) {
      errors.push({ location, message: `${entry} has bits set right of its prefix: write ${networkOf(range)}/${range[1]}`, error_code: 'format' });
    } else out.add(written(range));
  });
  if (errors.length > 0) throw validationFailed(errors);
  return [...out];
}

/** Whether `address` is in `range` (of the same family only: a mapped address was made IPv4 before). */
const within = (address: ipaddr.IPv4 | ipaddr.IPv6, range: Range) =>
  address.kind() === range[0].kind() && (address as ipaddr.IPv4).match(range as [ipaddr.IPv4, number]);

const contains = (outer: Range, inner: Range) => outer[1] <= inner[1] && within(inner[0], outer);

/** Whether `next` lets in no address that `current` keeps out (null: every address). */
export function allowlistNarrows(next: readonly string[] | null, current: readonly string[] | null): boolean {
  if (current === null) return true;
  if (next === null) return false;
  const ranges = current.map((e) => parseEntry(e)!);
  return next.every((entry) => {
    const range = parseEntry(entry)!;
    return ranges.some((outer) => contains(outer, range));
  });
}

/** Parsed lists, by their stored text: a key's list is parsed once, not on every request. */
const parsed = new Map<string, Range[]>();
const PARSED_MAX = 10_000;

/** Whether the client address `ip` (as the service trusts it: TRUST_PROXY) is in the stored list. */
export function allowlistAdmits(list: readonly string[], ip: string): boolean {
  const id = list.join(',');
  let ranges = parsed.get(id);
  if (ranges === undefined) {
    if (parsed.size >= PARSED_MAX) parsed.clear();
    ranges = list.map((entry) => parseEntry(entry)!);
    parsed.set(id, ranges);
  }
  if (!ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  return ranges.some((range) => within(address, range));
}
