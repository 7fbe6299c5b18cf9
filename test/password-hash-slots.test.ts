// Concurrent argon2 work is capped at one hash per core, so a sign-in flood leaves the event loop a core.
import { describe, expect, it, vi } from 'vitest';

let running = 0;
let mostAtOnce = 0;
vi.mock('@node-rs/argon2', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@node-rs/argon2')>();
  const counted =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A) => {
      running += 1;
      mostAtOnce = Math.max(mostAtOnce, running);
      try {
        return await fn(...args);
      } finally {
        running -= 1;
      }
    };
  return { ...actual, hash: counted(actual.hash), verify: counted(actual.verify) };
});

const { HASH_SLOTS, hashPassword, verifyPassword } = await import('../src/auth/passwords.js');

describe('argon2 hash slots', () => {
  it('runs at most one hash per core at once, and every caller still gets its answer', async () => {
    const stored = await hashPassword('correct horse battery staple');
    mostAtOnce = 0;
    const attempts = Array.from({ length: HASH_SLOTS * 3 + 1 }, (_, i) => verifyPassword(stored, i % 2 ? 'correct horse battery staple' : 'wrong password here'));
    const results = await Promise.all(attempts);
    expect(results).toEqual(attempts.map((_, i) => i % 2 === 1));
    expect(mostAtOnce).toBe(HASH_SLOTS);
    expect(running).toBe(0);
  });

  it('frees the slot when verification throws (a malformed stored hash)', async () => {
    const results = await Promise.all(Array.from({ length: HASH_SLOTS + 2 }, () => verifyPassword('not a hash', 'whatever password')));
    expect(results.every((ok) => ok === false)).toBe(true);
    expect(await verifyPassword(await hashPassword('another long password'), 'another long password')).toBe(true);
  });
});
