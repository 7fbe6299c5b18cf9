// The pool (src/db/pool.ts): an acquire sure of an idle connection arms no acquire timer; one that
// may wait is still timed out; a burst larger than the pool is served whole.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { UntimedWhenIdlePool } from '../src/db/pool.js';

const ACQUIRE_TIMEOUT_MS = 987;

let database: TestDatabase;
let pool: UntimedWhenIdlePool;
beforeAll(async () => {
  database = await createTestDatabase();
  pool = new UntimedWhenIdlePool({ connectionString: database.url, max: 2, connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS });
});
afterAll(async () => {
  await pool.end();
  await database.destroy();
});

/** The acquire timers `work` armed: setTimeout calls for the acquire timeout's duration. */
async function acquireTimersOf(work: () => Promise<unknown>): Promise<number> {
  const spy = vi.spyOn(globalThis, 'setTimeout');
  try {
    await work();
    return spy.mock.calls.filter(([, ms]) => ms === ACQUIRE_TIMEOUT_MS).length;
  } finally {
    spy.mockRestore();
  }
}

describe('the pool', () => {
  it('arms no acquire timer for a statement when a connection is idle and nobody waits', async () => {
    await Promise.all([pool.query('select 1'), pool.query('select 1')]); // both connections open, then idle
    expect(pool.idleCount).toBe(2);
    expect(await acquireTimersOf(() => pool.query('select $1::int as n', [1]))).toBe(0);
    expect(await acquireTimersOf(async () => (await pool.connect()).release())).toBe(0);
  });

  it('still times an acquire that may wait, and times it out when every connection stays taken', async () => {
    const held = [await pool.connect(), await pool.connect()];
    try {
      let failure: unknown;
      expect(await acquireTimersOf(() => pool.query('select 1').catch((err: unknown) => (failure = err)))).toBe(1);
      expect(String(failure)).toMatch(/timeout exceeded when trying to connect/);
    } finally {
      for (const client of held) client.release();
    }
  });

  it('serves every acquire of a burst larger than the pool, timed or not', async () => {
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => pool.query('select $1::int as n', [i]).then((r) => order.push((r.rows[0] as { n: number }).n))));
    expect(order).toHaveLength(20);
    expect(pool.totalCount).toBeLessThanOrEqual(2);
    expect(pool.waitingCount).toBe(0);
  });
});
