// Password hashing: argon2id with OWASP's parameters, from @node-rs/argon2 (prebuilt binaries,
// no install script). Hashing runs on libuv's thread pool, so it never blocks the event loop.
import { availableParallelism } from 'node:os';
import { hash, verify } from '@node-rs/argon2';
import { dictionary } from '@zxcvbn-ts/language-common';
import pLimit from 'p-limit';

export const ARGON2_PARAMETERS = {
  algorithm: 2, // Algorithm.Argon2id (a const enum, which isolated modules cannot read)
  memoryCost: 19_456, // KiB
  timeCost: 2,
  parallelism: 1,
} as const;

// At most one hash per core at a time: more would not finish sooner, but would take the cores
// from the event loop and PostgreSQL, so that a sign-in flood delays every other request. The
// rest wait their turn in order (p-limit's queue).
export const HASH_SLOTS = availableParallelism();
const inHashSlot = pLimit(HASH_SLOTS);

export function hashPassword(password: string): Promise<string> {
  return inHashSlot(() => hash(password, ARGON2_PARAMETERS));
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await inHashSlot(() => verify(passwordHash, password));
  } catch {
    return false; // a malformed stored hash never signs anyone in
  }
}

/** True when the stored hash was made with other parameters and should be replaced at sign-in. */
export function needsRehash(passwordHash: string): boolean {
  const { memoryCost: m, timeCost: t, parallelism: p } = ARGON2_PARAMETERS;
  return !passwordHash.startsWith(`$argon2id$v=19$m=${m},t=${t},p=${p}$`);
}

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 128;

// The common-password list maintained by zxcvbn-ts (about 49,000 leaked passwords, most used first).
const COMMON_PASSWORDS: ReadonlySet<string> = new Set((dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()));

/** True when the password (ignoring letter case) is on the common-password list. */
export function isCommonPassword(password: string): boolean {
  return COMMON_PASSWORDS.has(password.toLowerCase());
}

/**
 * The password policy: 12 to 128 characters counted in code points, no composition rules, not a
 * commonly used password. Returns the reason it fails, or null.
 */
export function passwordPolicyViolation(password: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN_LENGTH) return `The password must have at least ${PASSWORD_MIN_LENGTH} characters.`;
  if (length > PASSWORD_MAX_LENGTH) return `The password must have at most ${PASSWORD_MAX_LENGTH} characters.`;
  if (isCommonPassword(password)) return 'This password is too common; choose another.';
  return null;
}
