// Usage-limited keys (docs/PARTNER-KEYS.md, "Usage limits"): a key may carry a number of remaining
// uses, optionally refilled each day or month (UTC) to a set amount. Spent in PostgreSQL, one
// conditional UPDATE per admitted request: no two processes can spend the same use, so a key is
// never admitted more often in total than it had uses, at its last use too. The refill is applied
// lazily by that same statement, when the row was last set before the current period began: the
// first spender of a period refills it, once, under the row's lock.
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
 * One statement: spend a use if one is left (refilled first when due), and say what the key's row
 * is either way. `spent_remaining` is null when nothing was spent: refused if the key still has a
 * row (`limited`), else the key is no longer limited.
 */
const spendUse = fixedStatement((_db, p: { id: string; now: Date }) =>
  sql<{ spent_remaining: number | null; limited: boolean; refill_interval: 'day' | 'month' | null; refill_amount: number | null }>`
    with spent as (
      update api_key_uses u set
        remaining = case when u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${p.now}::timestamptz, 'UTC')
          then u.refill_amount - 1 else u.remaining - 1 end,
        refilled_at = case when u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${p.now}::timestamptz, 'UTC')
          then ${p.now}::timestamptz else u.refilled_at end
      where u.api_key_id = ${p.id}::uuid
        and (u.remaining > 0 or (u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${p.now}::timestamptz, 'UTC')))
      returning u.remaining
    )
    select (select remaining from spent) as spent_remaining, (k.api_key_id is not null) as limited, k.refill_interval, k.refill_amount
    from (select 1) as one left join api_key_uses k on k.api_key_id = ${p.id}::uuid`,
);

/** The spend statement's text (bench/ runs the same). */
export const SPEND_USE_SQL = spendUse.sql;

/** Spends one use of key `id` at `now`; refused when none is left until the next refill (or ever). */
export async function spendKeyUse(db: Kysely<Database>, id: string, now: Date): Promise<KeyUseDecision> {
  const row = (await spendUse.execute(db, { id, now }))[0]!;
  const period = row.refill_interval;
  const next = period === null ? null : nextPeriodStart(period, now);
  const refill = period === null ? null : { amount: row.refill_amount!, periodSeconds: Math.round((next!.getTime() - periodStart(period, now).getTime()) / 1000) };
  const refillInSeconds = next === null ? null : Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000));
  if (row.spent_remaining !== null) return { allowed: true, remaining: row.spent_remaining, refillInSeconds, refill };
  if (row.limited) return { allowed: false, remaining: 0, refillInSeconds, refill };
  return { allowed: true, remaining: null, refillInSeconds: null, refill: null };
}

/** The spender the HTTP edge calls for a usage-limited key (src/services.ts wires it). */
export const keyUseSpender = (deps: { db: Kysely<Database>; clock: Clock }) => (apiKeyId: string) => spendKeyUse(deps.db, apiKeyId, deps.clock.now());
