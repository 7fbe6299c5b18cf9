// The limiter's bound, as a property: P processes deciding in memory and reconciling through one
// store, in any interleaving of requests and reconciliations, never admit more than
// N + (P − 1) × floor(fraction × N) in a window (src/rate-limits/limiter.ts). The store here is
// in memory; the PostgreSQL one runs in test/partner-keys-balanced.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from '../src/clock.js';
import { RateLimiter, counterKey, type CounterDelta, type CounterStore } from '../src/rate-limits/limiter.js';

/** One shared store; each reconciliation may be held until the test lets it finish. */
class MemoryStore implements CounterStore {
  readonly totals = new Map<string, number>();
  async reconcile(batch: CounterDelta[]) {
    await Promise.resolve();
    const out = new Map<string, number>();
    for (const b of batch) {
      const key = counterKey(b.subject, b.windowStart);
      const total = (this.totals.get(key) ?? 0) + b.delta;
      this.totals.set(key, total);
      out.set(key, total);
    }
    return out;
  }
}

const LIMIT = { requests: 50, perSeconds: 10 };

describe('the rate limiter across processes', () => {
  for (const processes of [2, 3]) {
    it(`admits at most N + ${processes - 1} × floor(0.1 × N) in a window with ${processes} processes, whatever the interleaving`, async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.record({ process: fc.nat(processes - 1), reconcile: fc.boolean(), burst: fc.integer({ min: 1, max: 12 }) }), { minLength: 1, maxLength: 60 }),
          async (steps) => {
            const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
            const store = new MemoryStore();
            const limiters = Array.from({ length: processes }, () => new RateLimiter(store, clock, 0.1));
            let admitted = 0;
            for (const step of steps) {
              const limiter = limiters[step.process]!;
              // A burst arrives at once: the requests that must reconcile wait together.
              const decisions = await Promise.all(Array.from({ length: step.burst }, () => limiter.admit('key:k', LIMIT)));
              admitted += decisions.filter((d) => d.allowed).length;
              if (step.reconcile) await limiter.reconcile();
            }
            expect(admitted).toBeLessThanOrEqual(LIMIT.requests + (processes - 1) * 5);
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  it('lets one process use the whole limit, and no more', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const limiter = new RateLimiter(new MemoryStore(), clock, 0.1);
    const decisions = await Promise.all(Array.from({ length: 80 }, () => limiter.admit('key:k', LIMIT)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(50);
  });

  it('pushes every admission before answering it when the limit is under 10 (fraction × N rounds to 0): exact', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const store = new MemoryStore();
    const a = new RateLimiter(store, clock, 0.1);
    const b = new RateLimiter(store, clock, 0.1);
    let admitted = 0;
    for (let i = 0; i < 20; i++) admitted += (await (i % 2 ? a : b).admit('key:k', { requests: 5, perSeconds: 10 })).allowed ? 1 : 0;
    expect(admitted).toBe(5);
  });
});
