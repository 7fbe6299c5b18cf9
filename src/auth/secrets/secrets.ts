// Secrets handed to clients (access tokens, refresh tokens, API keys): a readable prefix naming
// the kind, 256 random bits as 43 base62 characters, and a CRC32 checksum, as GitHub's tokens do.
// Leak scanners can recognise them; a mistyped or made-up one fails the checksum without a
// database lookup.
// Only the SHA-256 digest is ever stored.
import { hash, randomFillSync } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BASE62_CODES = Buffer.from(BASE62, 'latin1');
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // 32 bits in base62

/** The checksum: CRC32 of `prefix_body`, as 6 base62 digits (most significant first). */
function checksum(prefix: string, body: string): string {
  let n = crc32(`${prefix}_${body}`);
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62]! + out;
    n = Math.floor(n / 62);
  }
  return out;
}

// Random bytes are drawn 4 KiB at a time, as Node's randomUUID does: each call into OpenSSL costs
// the event loop about as much whatever its size (measured with bench/profile.ts sign-in), and a
// sign-in needs about 90 bytes.
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;
function randomByte(): number {
  if (randomOffset === randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  return randomPool[randomOffset++]!;
}

// Each character is one random byte below 248 (= 4 x 62) taken modulo 62, so all 62 are equally
// likely; 43 characters carry 43 x log2(62) = 256.03 bits. Bytes of 248 and above are skipped.
// No BigInt arithmetic (a 256-bit number written in base 62 has the same shape, but leaves about
// 4 KB of garbage per secret, and a sign-in makes two).
function randomBase62(length: number): string {
  const out = Buffer.allocUnsafe(length);
  for (let filled = 0; filled < length; ) {
    const byte = randomByte();
    if (byte < 248) out[filled++] = BASE62_CODES[byte % 62]!;
  }
  return out.toString('latin1');
}

/** A new secret of the given kind, e.g. `generateSecret('boa')` -> `boa_<43 chars>_<6 chars>`. */
export function generateSecret(prefix: string): string {
  const body = randomBase62(BODY_LENGTH);
  return `${prefix}_${body}_${checksum(prefix, body)}`;
}

/** True when `value` has the shape and checksum of a secret of this kind (no lookup needed). */
export function isWellFormedSecret(prefix: string, value: string): boolean {
  const parts = value.split('_');
  if (parts.length !== 3 || parts[0] !== prefix) return false;
  const [, body, sum] = parts as [string, string, string];
  if (body.length !== BODY_LENGTH || sum.length !== CHECKSUM_LENGTH || !/^[0-9A-Za-z]+$/.test(body + sum)) return false;
  return checksum(prefix, body) === sum;
}

// A secret's body standing alone (BODY_LENGTH base62 characters, not part of a longer run): what a
// secret pasted where it does not belong (a header that is logged) looks like, with or without its
// prefix and checksum. Longer runs (a 64-digit hex trace id) are not a secret of ours.
const SECRET_BODY = new RegExp(`(?<![0-9A-Za-z])[0-9A-Za-z]{${BODY_LENGTH}}(?![0-9A-Za-z])`);

/** True when `text` may hold one of these secrets: never log or store it. */
export function mayHoldSecret(text: string): boolean {
  return SECRET_BODY.test(text);
}

/** The SHA-256 digest stored and looked up in place of the secret. */
export function digestSecret(value: string): Buffer {
  return hash('sha256', value, 'buffer'); // one call, no Hash object
}

/**
 * The regular expression a secret-scanning partner registers to find secrets of this kind in
 * public text: the prefix, the body and the checksum, not inside a longer word. Published in the
 * contract (POST /api-keys/leaked) for API keys.
 */
export const secretPattern = (prefix: string) => new RegExp(`\\b${prefix}_[0-9A-Za-z]{${BODY_LENGTH}}_[0-9A-Za-z]{${CHECKSUM_LENGTH}}\\b`);
