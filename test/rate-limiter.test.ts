// The limiter's bound, as a property: P processes deciding in memory and reconciling through one
// store, in any interleaving of requests and reconciliations, never admit more than
// N + (P − 1) × floor(fraction × N) in a window (src/limits/limiter.ts). The store here is
// in memory; the PostgreSQL one runs in test/partner-keys-balanced.test.ts and
// test/rate-limit-window-edge.test.ts.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ManualClock } from '../src/clock.js';
import { COUNTER_KEPT_MS, LATE_PUSH_MS, RateLimiter, counterKey, type CounterDelta, type CounterStore } from '../src/limits/limiter.js';

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
const PERIOD_MS = LIMIT.perSeconds * 1000;

/**
 * A database that answers slowly: each reconciliation is held until the test releases it, in any
 * order (statements of different processes finish in any order), and takes effect when released;
 * one held longer than its statement timeout fails instead. The maintenance step deletes the
 * counters of windows over for COUNTER_KEPT_MS, as src/limits/repository.ts does.
 */
class SlowStore implements CounterStore {
  readonly totals = new Map<string, { total: number; windowEnd: number }>();
  readonly held: { batch: CounterDelta[]; at: number; resolve: (totals: Map<string, number>) => void; reject: (err: Error) => void }[] = [];
  constructor(private readonly clock: ManualClock) {}
  reconcile(batch: CounterDelta[]) {
    return new Promise<Map<string, number>>((resolve, reject) => this.held.push({ batch, at: this.clock.now().getTime(), resolve, reject }));
  }
  release(index: number) {
    const [call] = this.held.splice(index % this.held.length, 1);
    if (this.clock.now().getTime() - call!.at > STATEMENT_TIMEOUT_MS) return call!.reject(new Error('canceling statement due to statement timeout'));
    const out = new Map<string, number>();
    for (const b of call!.batch) {
      const key = counterKey(b.subject, b.windowStart);
      const total = (this.totals.get(key)?.total ?? 0) + b.delta;
      this.totals.set(key, { total, windowEnd: b.windowEnd.getTime() });
      out.set(key, total);
    }
    call!.resolve(out);
  }
  sweep() {
    for (const [key, { windowEnd }] of this.totals) if (windowEnd <= this.clock.now().getTime() - COUNTER_KEPT_MS) this.totals.delete(key);
  }
}

/** The longest a statement may run: far more than DB_STATEMENT_TIMEOUT_MS, what the limiter's margins assume. */
const STATEMENT_TIMEOUT_MS = COUNTER_KEPT_MS - LATE_PUSH_MS;

/** Lets every continuation that can run, run (a released answer reaches its waiters, a queued reconciliation starts). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const step = (processes: number) =>
  fc.oneof(
    // A burst arrives at one process at once and is not awaited: what must wait for a reconciliation queues.
    fc.record({ kind: fc.constant('burst' as const), process: fc.nat(processes - 1), size: fc.integer({ min: 1, max: 60 }) }),
    // The background step of one process starts a reconciliation.
    fc.record({ kind: fc.constant('reconcile' as const), process: fc.nat(processes - 1) }),
    // The database answers one of the statements it holds.
    fc.record({ kind: fc.constant('answer' as const), index: fc.nat() }),
    // Time passes, often across the end of a window; now and then the database stalls for minutes.
    fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 4_000 }) }),
    fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 2 * COUNTER_KEPT_MS }) }),
    // The maintenance step deletes the counters of windows long over.
    fc.record({ kind: fc.constant('sweep' as const) }),
  );

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

  for (const processes of [2, 3, 4]) {
    it(`admits at most N + ${processes - 1} × floor(0.1 × N) in every window with ${processes} processes, requests queued across the end of a window and a database that answers slowly`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 0, max: PERIOD_MS - 1 }), fc.array(step(processes), { minLength: 1, maxLength: 80 }), async (offset, steps) => {
          const clock = new ManualClock(new Date(Date.parse('2026-12-14T10:00:00.000Z') + offset));
          const store = new SlowStore(clock);
          const limiters = Array.from({ length: processes }, () => new RateLimiter(store, clock, 0.1));
          // Each request with the window it arrived in: a window's admissions are what the bound is about.
          // (A request whose reconciliation failed is answered 503: not admitted.)
          const requests: { window: number; allowed: Promise<boolean> }[] = [];
          for (const s of steps) {
            if (s.kind === 'burst') {
              for (let i = 0; i < s.size; i++) {
                const window = Math.floor(clock.now().getTime() / PERIOD_MS);
                requests.push({ window, allowed: Promise.resolve(limiters[s.process]!.admit('key:k', LIMIT)).then((d) => d.allowed, () => false) });
              }
            } else if (s.kind === 'reconcile') {
              limiters[s.process]!.reconcile().catch(() => {});
            } else if (s.kind === 'sweep') {
              store.sweep();
            } else if (s.kind === 'answer') {
              if (store.held.length > 0) store.release(s.index);
            } else {
              clock.advance(s.ms);
            }
            await settle();
          }
          // The database answers everything still held; every request is decided.
          for (await settle(); store.held.length > 0; await settle()) store.release(0);
          const perWindow = new Map<number, number>();
          for (const { window, allowed } of requests) if (await allowed) perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
          for (const admitted of perWindow.values()) expect(admitted).toBeLessThanOrEqual(LIMIT.requests + (processes - 1) * 5);
        }),
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
