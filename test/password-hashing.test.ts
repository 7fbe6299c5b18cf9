// Password hashing runs in a pool of worker threads at a lower priority than the event loop, so a
// sign-in flood keeps every core busy without delaying other requests (docs/BENCHMARKS.md).
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HASH_THREADS, HASH_THREAD_NICE, hashPassword, needsRehash, verifyPassword } from '../src/auth/secrets/passwords.js';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  return new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return [Number(tid), Number(fields[16])];
    }),
  );
}

describe('password hashing', () => {
  it('answers every one of many concurrent verifications correctly', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(needsRehash(stored)).toBe(false);
    const attempts = Array.from({ length: HASH_THREADS * 3 + 1 }, (_, i) => verifyPassword(stored, i % 2 ? 'correct horse battery staple' : 'wrong password here'));
    expect(await Promise.all(attempts)).toEqual(attempts.map((_, i) => i % 2 === 1));
  });

  it('hashes on threads at a lower priority than the event loop', async () => {
    await Promise.all(Array.from({ length: HASH_THREADS }, () => hashPassword('a password to hash')));
    const niceness = threadNiceness();
    expect(HASH_THREAD_NICE).toBeGreaterThan(0);
    expect(niceness.get(process.pid)).toBe(0); // the main thread (its id is the process id)
    expect([...niceness.values()].filter((nice) => nice === HASH_THREAD_NICE).length).toBeGreaterThanOrEqual(HASH_THREADS);
  });

  it('refuses a malformed stored hash without failing, and keeps working after it', async () => {
    const results = await Promise.all(Array.from({ length: HASH_THREADS + 2 }, () => verifyPassword('not a hash', 'whatever password')));
    expect(results.every((ok) => ok === false)).toBe(true);
    expect(await verifyPassword(await hashPassword('another long password'), 'another long password')).toBe(true);
  });
});
