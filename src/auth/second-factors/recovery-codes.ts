// Recovery codes: 10 per person, each 10 characters of Crockford's base32 alphabet in lower case
// (50 random bits; no i, l, o or u to misread), written `xxxxx-xxxxx`. Shown once; only SHA-256
// digests are stored (the codes are random, so a fast digest is enough, as for tokens), and
// guessing is held back by the sign-in throttle (at a step-up, by the session's budget of refused
// step-ups, src/auth/sessions/step-up-refusals.ts). Typed back in any case, with or without dashes
// and spaces. The digest is keyed: an HMAC under the sealing key (src/auth/secrets/sealing-keys.ts) of the
// code's SHA-256, so a copy of the table alone cannot test a guess; the inner SHA-256 is what was
// stored before keys came from configuration, which lets the start-up re-seal key those too.
import { randomBytes } from 'node:crypto';
import { digestSecret } from '../secrets/secrets.js';
import { keyedDigest } from '../secrets/sealing-keys.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function newCode(): string {
  const chars = [...randomBytes(10)].map((byte) => ALPHABET[byte & 31]!).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
}

/** The unkeyed digest of a code, whatever its case, dashes and spaces (what was stored before keys). */
export function unkeyedRecoveryDigest(code: string): Buffer {
  return digestSecret(`recovery:${code.toLowerCase().replace(/[\s-]/g, '')}`);
}

/** The digest a code is stored and looked up by, under `key` (the sealing key for recovery codes). */
export function keyRecoveryDigest(key: Buffer, unkeyed: Buffer): Buffer {
  return keyedDigest(key, unkeyed);
}
