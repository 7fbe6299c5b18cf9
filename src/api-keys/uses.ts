// Usage-limited keys (docs/PARTNER-KEYS.md, "Usage limits"): a key may carry a number of remaining
// uses, optionally refilled each day or month (UTC) to a set amount. Spent in PostgreSQL by one
// conditional UPDATE under the row's lock: no two processes can spend the same use, so a key is
// never admitted more often in total than it had uses, at its last use too. The refill is applied
// lazily by that same statement, when the row was last set before the current period began: the
// first spender of a period refills it, once, under the row's lock.
//
// A process spends for the requests waiting on one key together (UseSpender): while its statement
// for a key is in flight, the key's next requests wait, and the next statement spends as many uses
// as there are requests waiting (or as many as are left). One committed write serves a burst
// instead of one each, and nothing is held back: a use is taken from the database only for a
// request that is there to be admitted, so exactly the remaining count is admitted, and each
// request is told its own remaining count (the uses a statement takes are a range no other
// process sees).
//
// Only limited keys pay this round trip: the key statement (repository.ts) says whether a key is
// limited, and the key cache keeps that fact in step (a row of api_key_uses added or removed
// notifies its key). A key whose row was removed after the cache loaded it is admitted unlimited,
// as it now is.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { fixedStatement } from '../db/fixed-statement.js';
import type { KeyUseDecision } from '../auth/principal.js';
import type { Clock } from '../clock.js';

/** How a key is refilled, as the contract writes it. */
export interface UsesRefill {
  interval: 'daily' | 'monthly';
  amount: number;
}

/** The contract's interval, as its date_trunc field (stored). */
export const PERIOD_OF = { daily: 'day', monthly: 'month' } as const;
export const INTERVAL_OF = { day: 'daily', month: 'monthly' } as const;

/** The start of the period of `interval` (UTC) that contains `at`. */
export function periodStart(period: 'day' | 'month', at: Date): Date {
  return period === 'day' ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate())) : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The start of the period after the one that contains `at`: when the next refill is due. */
export function nextPeriodStart(period: 'day' | 'month', at: Date): Date {
  return period === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

/** The uses a key has now: its stored count, or the refill's amount when a period began since it was set. */
export function remainingNow(row: { remaining: number; refill_interval: 'day' | 'month' | null; refill_amount: number | null; refilled_at: Date }, now: Date): number {
  if (row.refill_interval !== null && row.refilled_at < periodStart(row.refill_interval, now)) return row.refill_amount!;
  return row.remaining;
}

/**
 * One statement: spend up to `n` uses if any are left (refilled first when due), and say what the
 * key's row is either way, as locked (`due`): a row removed (the limit lifted) while the statement
 * waited for its lock is no row, not the statement's snapshot of it, so the key is admitted unlimited. `taken` is how many were spent (0 when none: refused if the key still
 * has a row, `limited`, else the key is no longer limited) and `remaining` what is left after.
 */
const spendUses = fixedStatement((_db, p: { id: string; n: number; now: Date }) =>
  sql<{ taken: number; remaining: number | null; limited: boolean; refill_interval: 'day' | 'month' | null; refill_amount: number | null }>`
    with due as (
      select u.api_key_id, u.refill_interval, u.refill_amount,
        (u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${p.now}::timestamptz, 'UTC')) as refill,
        case when u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${p.now}::timestamptz, 'UTC')
          then u.refill_amount else u.remaining end as available
      from api_key_uses u where u.api_key_id = ${p.id}::uuid
      for update
    ), spent as (
      update api_key_uses u set
        remaining = due.available - least(${p.n}::int, due.available),
        refilled_at = case when due.refill then ${p.now}::timestamptz else u.refilled_at end
      from due
      where u.api_key_id = due.api_key_id and due.available > 0
      returning u.remaining, least(${p.n}::int, due.available) as taken
    )
    select coalesce((select taken from spent), 0)::int as taken, (select remaining from spent) as remaining,
      exists (select 1 from due) as limited, (select refill_interval from due) as refill_interval, (select refill_amount from due) as refill_amount`,
);

/** The spend statement's text (bench/ runs the same). */
export const SPEND_USES_SQL = spendUses.sql;

/** Spends up to `n` uses of key `id` at `now`: the decision of each of the `n` requests, in order. */
export async function spendKeyUses(db: Kysely<Database>, id: string, n: number, now: Date): Promise<KeyUseDecision[]> {
  const row = (await spendUses.execute(db, { id, n, now }))[0]!;
  const period = row.refill_interval;
  const next = period === null ? null : nextPeriodStart(period, now);
  const refill = period === null ? null : { amount: row.refill_amount!, periodSeconds: Math.round((next!.getTime() - periodStart(period, now).getTime()) / 1000) };
  const refillInSeconds = next === null ? null : Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
  return Array.from({ length: n }, (_, i): KeyUseDecision => {
    // The first request of the range is told the most that remains after it.
    if (i < row.taken) return { allowed: true, remaining: row.remaining! + (row.taken - 1 - i), refillInSeconds, refill };
    if (row.limited) return { allowed: false, remaining: 0, refillInSeconds, refill };
    return { allowed: true, remaining: null, refillInSeconds: null, refill: null };
  });
}

/** Spends one use of key `id` at `now`; refused when none is left until the next refill (or ever). */
export async function spendKeyUse(db: Kysely<Database>, id: string, now: Date): Promise<KeyUseDecision> {
  return (await spendKeyUses(db, id, 1, now))[0]!;
}

/** At most this many requests' uses in one statement. */
const MOST_PER_STATEMENT = 1000;

interface Waiting {
  resolve(decision: KeyUseDecision): void;
  reject(error: unknown): void;
}

/**
 * A process's spender for usage-limited keys: one statement in flight per key; the requests that
 * arrive meanwhile are spent for together by the next one (the edge calls `spend`, src/services.ts wires it).
 */
export class UseSpender {
  /** By key: the requests waiting for the next statement (a key is here while its statement runs). */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(private readonly deps: { db: Kysely<Database>; clock: Clock }) {}

  spend(apiKeyId: string): Promise<KeyUseDecision> {
    return new Promise((resolve, reject) => {
      const queue = this.waiting.get(apiKeyId);
      if (queue) queue.push({ resolve, reject });
      else {
        this.waiting.set(apiKeyId, [{ resolve, reject }]);
        void this.drain(apiKeyId);
      }
    });
  }

  private async drain(apiKeyId: string): Promise<void> {
    const queue = this.waiting.get(apiKeyId)!;
    while (queue.length > 0) {
      const batch = queue.splice(0, MOST_PER_STATEMENT);
      try {
        const decisions = await spendKeyUses(this.deps.db, apiKeyId, batch.length, this.deps.clock.now());
        batch.forEach((request, i) => request.resolve(decisions[i]!));
      } catch (err) {
        for (const request of batch) request.reject(err);
      }
    }
    this.waiting.delete(apiKeyId);
  }
}
