// The counters the server processes reconcile their rate-limit decisions through: one statement
// adds every process's pending admissions and reads back every total.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { COUNTER_KEPT_MS, counterKey, type CounterDelta, type CounterStore } from './limiter.js';

export function postgresCounterStore(db: Kysely<Database>): CounterStore {
  return {
    async reconcile(batch: CounterDelta[]) {
      const { rows } = await sql<{ subject: string; window_start: Date; count: string }>`
        with batch as (
          select * from unnest(${batch.map((b) => b.subject)}::text[], ${batch.map((b) => b.windowStart.toISOString())}::timestamptz[],
            ${batch.map((b) => b.windowEnd.toISOString())}::timestamptz[], ${batch.map((b) => b.delta)}::bigint[]) as b(subject, window_start, window_end, delta)
        ), pushed as (
          insert into rate_limit_counters as c (subject, window_start, window_end, count)
          select subject, window_start, window_end, delta from batch where delta > 0
          on conflict (subject, window_start) do update set count = c.count + excluded.count
          returning c.subject, c.window_start, c.count
        )
        select subject, window_start, count from pushed
        union all
        select c.subject, c.window_start, c.count from rate_limit_counters c join batch b using (subject, window_start) where b.delta = 0`.execute(db);
      return new Map(rows.map((r) => [counterKey(r.subject, r.window_start), Number(r.count)]));
    },
  };
}

/**
 * Deletes the counters of windows over for COUNTER_KEPT_MS (the maintenance step): not at once,
 * because a reconciliation may still push requests that waited at a window's end into its total.
 */
export async function deleteEndedCounters(db: Kysely<Database>, now: Date): Promise<number> {
  const result = await db.deleteFrom('rate_limit_counters').where('window_end', '<=', new Date(now.getTime() - COUNTER_KEPT_MS)).executeTakeFirst();
  return Number(result.numDeletedRows);
}
