// Recovery codes: 10 per person, each 10 characters of Crockford's base32 alphabet in lower case
// (50 random bits; no i, l, o or u to misread), written `xxxxx-xxxxx`. Shown once; only SHA-256
// digests are stored (the codes are random, so a fast digest is enough, as for tokens), and
// guessing is held back by the sign-in throttle. Typed back in any case, with or without dashes
// and spaces.
import { randomBytes } from 'node:crypto';
import { digestSecret } from '../auth/secrets.js';

export const RECOVERY_CODE_COUNT = 10;
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function newCode(): string {
  const chars = [...randomBytes(10)].map((byte) => ALPHABET[byte & 31]!).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

export function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, newCode);
}

/** The digest a code is stored and looked up by, whatever its case, dashes and spaces. */
export function digestRecoveryCode(code: string): Buffer {
  return digestSecret(`recovery:${code.toLowerCase().replace(/[\s-]/g, '')}`);
}
