// Secrets handed to clients (access tokens, refresh tokens, API keys): a readable prefix naming
// the kind, 256 random bits in base62, and a CRC32 checksum, as GitHub's tokens do. Leak scanners
// can recognise them; a mistyped or made-up one fails the checksum without a database lookup.
// Only the SHA-256 digest is ever stored.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6; // 32 bits in base62

function toBase62(bytes: Buffer, length: number): string {
  let n = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let out = '';
  while (out.length < length) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

function checksum(prefix: string, body: string): string {
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(`${prefix}_${body}`));
  return toBase62(sum, CHECKSUM_LENGTH);
}

/** A new secret of the given kind, e.g. `generateSecret('boa')` -> `boa_<43 chars>_<6 chars>`. */
export function generateSecret(prefix: string): string {
  const body = toBase62(randomBytes(32), BODY_LENGTH);
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

/** The SHA-256 digest stored and looked up in place of the secret. */
export function digestSecret(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
