// Usage-limited keys (docs/PARTNER-KEYS.md, "Usage limits"): a key may carry a number of remaining
// uses, optionally refilled each day or month (UTC) to a set amount. Spent in PostgreSQL by one
// conditional UPDATE under the row's lock: no two processes can spend the same use, so a key is
// never admitted more often in total than it had uses, at its last use too. The refill is applied
// lazily by that same statement, when the row was last set before the current period began: the
// first spender of a period refills it, once, under the row's lock.
//
// A process spends for the requests waiting on one key together (UseSpender): while its statement
// for a key is in flight, the key's next requests wait, and the next statement spends as many uses
// as there are requests waiting (or as many as are left). Under sustained use it also takes a
// lease, uses spent from memory by the next requests (UseSpender says when a lease is good and
// when it is given back). The last LEASE_FLOOR uses are never leased: at its last use, a key is
// spent request by request, in the database, wherever it is asked.
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
import type { Logger } from 'pino';

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

/** Whether the refill of the api_key_uses row `u` is due at `now`: a period began since its count was last set (the SQL of remainingNow). */
export const refillDueAt = (now: unknown) => sql<boolean>`(u.refill_interval is not null and u.refilled_at < date_trunc(u.refill_interval, ${now}::timestamptz, 'UTC'))`;

/** The uses the api_key_uses row `u` has at `now`: the refill's amount when one is due, else its count (remainingNow in SQL). */
export const usesAvailableAt = (now: unknown) => sql<number>`case when ${refillDueAt(now)} then u.refill_amount else u.remaining end`;

/**
 * One statement: spend up to `n` uses if any are left (refilled first when due), plus up to `extra`
 * more as a lease (`UseSpender`) while more than `floor` would be left after them, at most a
 * quarter of what is left above the floor; and say what the key's row is either way, as locked
 * (`due`): a row removed (the limit lifted) while the statement waited for its lock is no row, not
 * the statement's snapshot of it, so the key is admitted unlimited. `taken` is how many were spent
 * (0 when none: refused if the key still has a row, `limited`, else the key is no longer limited),
 * `remaining` what is left after, and `refilled_at` and `version` the row's, which a lease given
 * back must find unchanged.
 */
const spendUses = fixedStatement((_db, p: { id: string; n: number; extra: number; floor: number; now: Date }) =>
  sql<{ taken: number; remaining: number | null; limited: boolean; refill_interval: 'day' | 'month' | null; refill_amount: number | null; refilled_at: Date | null; version: string | null }>`
    with due as (
      select u.api_key_id, u.refill_interval, u.refill_amount, ${refillDueAt(p.now)} as refill, ${usesAvailableAt(p.now)} as available
      from api_key_uses u where u.api_key_id = ${p.id}::uuid
      for update
    ), take as (
      select due.*, least(due.available, ${p.n}::int + least(${p.extra}::int, greatest(0, (due.available - ${p.n}::int - ${p.floor}::int) / 4))) as taken
      from due
    ), spent as (
      update api_key_uses u set
        remaining = take.available - take.taken,
        refilled_at = case when take.refill then ${p.now}::timestamptz else u.refilled_at end
      from take
      where u.api_key_id = take.api_key_id and take.available > 0
      returning u.remaining, take.taken, u.refilled_at, u.version::text as version
    )
    select coalesce((select taken from spent), 0)::int as taken, (select remaining from spent) as remaining,
      exists (select 1 from due) as limited, (select refill_interval from due) as refill_interval, (select refill_amount from due) as refill_amount,
      (select refilled_at from spent) as refilled_at, (select version from spent) as version`,
);

/** A lease's unspent uses put back, unless the count was set (`version` moved) or refilled (`refilled_at` moved) since it was taken. */
const giveBackUses = fixedStatement((_db, p: { id: string; n: number; version: string; refilledAt: Date }) =>
  sql<never>`
    update api_key_uses set remaining = least(remaining + ${p.n}::int, 1000000000)
    where api_key_id = ${p.id}::uuid and version = ${p.version}::bigint and refilled_at = ${p.refilledAt}::timestamptz`,
);

/** The spend statement's text (bench/ runs the same). */
export const SPEND_USES_SQL = spendUses.sql;

/** What one spend statement answered, for the `n` requests it was run for and the lease beside them. */
interface Taken {
  decisions: KeyUseDecision[];
  /** Uses taken beyond the `n` requests: the lease (0 when none). */
  leased: number;
  /** What the key's row has left after the statement (null: not limited). */
  remaining: number | null;
  refilledAt: Date | null;
  version: string | null;
  /** When the uses taken stop counting: the next refill (null: never refilled). */
  until: Date | null;
  refill: KeyUseDecision['refill'];
}

async function takeUses(db: Kysely<Database>, id: string, n: number, extra: number, now: Date): Promise<Taken> {
  const row = (await spendUses.execute(db, { id, n, extra, floor: LEASE_FLOOR, now }))[0]!;
  const period = row.refill_interval;
  const next = period === null ? null : nextPeriodStart(period, now);
  const refill = period === null ? null : { amount: row.refill_amount!, periodSeconds: Math.round((next!.getTime() - periodStart(period, now).getTime()) / 1000) };
  const refillInSeconds = refillIn(next, now);
  const admitted = Math.min(n, row.taken);
  const leased = row.taken - admitted;
  const decisions = Array.from({ length: n }, (_, i): KeyUseDecision => {
    // The first request of the range is told the most that remains after it (the lease counts as remaining).
    if (i < admitted) return { allowed: true, remaining: row.remaining! + leased + (admitted - 1 - i), refillInSeconds, refill };
    if (row.limited) return { allowed: false, remaining: 0, refillInSeconds, refill };
    return { allowed: true, remaining: null, refillInSeconds: null, refill: null };
  });
  return { decisions, leased, remaining: row.remaining, refilledAt: row.refilled_at, version: row.version, until: next, refill };
}

const refillIn = (next: Date | null, now: Date) => (next === null ? null : Math.max(1, Math.ceil((next.getTime() - now.getTime()) / 1000)));

/** Spends up to `n` uses of key `id` at `now`: the decision of each of the `n` requests, in order (no lease). */
export async function spendKeyUses(db: Kysely<Database>, id: string, n: number, now: Date): Promise<KeyUseDecision[]> {
  return (await takeUses(db, id, n, 0, now)).decisions;
}

/** How often leases are looked at for giving back. */
const SWEEP_MS = 250;

/** At most this many requests' uses in one statement. */
const MOST_PER_STATEMENT = 1000;

/** Leases are taken only while more than this many uses would be left: the last ones are spent request by request, so each is admitted wherever it is asked. */
export const LEASE_FLOOR = 1000;

/** The largest lease (uses taken ahead by one process for one key). */
export const MOST_LEASED = 256;

/**
 * A lease is spent for this long at most after it was taken, then given back, used up or not: a
 * process holds uses while another may refuse the key for no longer than this, and the count a
 * lease's requests are told (the row's at the take) is no older.
 */
export const LEASE_LIFE_MS = 1000;

interface Waiting {
  resolve(decision: KeyUseDecision): void;
  reject(error: unknown): void;
}

/** Uses a process took ahead for one key, spent from memory. */
interface Lease {
  /** Uses still held. */
  left: number;
  /** The size of the last lease taken: the next doubles it, up to MOST_LEASED. */
  size: number;
  /** What the key's row had left when the lease was taken (the lease excluded). */
  remainingAfter: number;
  /** The row's refilled_at and version after the take: a lease is given back only if neither has moved. */
  refilledAt: Date;
  /** The row's version (a bigint from a sequence, as text): never the same for two sets, even of a row removed and added again. */
  version: string;
  /** The key cache's epoch at the take: the lease is used only while it is unchanged. */
  epoch: number;
  /** The next refill: the lease's uses belong to the period that ends there (null: never refilled). */
  until: Date | null;
  refill: KeyUseDecision['refill'];
  /** performance.now() at its take (real time, whatever the injected clock says). */
  takenAtMs: number;
}

/**
 * A process's spender for usage-limited keys. One statement in flight per key; the requests that
 * arrive meanwhile are spent for together by the next one (the edge calls `spend`, src/services.ts
 * wires it). Under sustained use the statement also takes a lease: up to MOST_LEASED uses more,
 * doubling from two while the key keeps being asked, spent from memory by the next requests.
 *
 * A lease never makes a key admit more than it had: its uses are taken from the row under its lock
 * like any other. It is used only while the key cache is in step and nothing has been heard since
 * it was taken (`epoch`: any notification; a count or refill changed by a person notifies its
 * key), only in the period it was taken in (a refill replaces unspent uses), and for LEASE_LIFE_MS
 * at most. Then, or at shutdown, it is given back, unless the row's
 * count was set (`version`) or refilled (`refilled_at`) since. Taken only above LEASE_FLOOR, at
 * most a quarter of what is left above it, so the last uses are spent request by request. A
 * request admitted from a lease is told the row's count at the take plus what its lease still
 * holds: at most LEASE_LIFE_MS old, and blind to what other processes spent meanwhile.
 */
export class UseSpender {
  /** By key: the requests waiting for the next statement (a key is here while its statement runs). */
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly leases = new Map<string, Lease>();
  /** Leases being given back (stop awaits them). */
  private readonly givingBack = new Set<Promise<void>>();
  private sweep: NodeJS.Timeout | undefined;
  private stopped = false;
  /** The keys' statements in flight (stop waits for them: one may bring a lease back after it). */
  private readonly draining = new Set<Promise<void>>();

  /** `epoch`: the key cache's (KeyCache.epoch), null while it is not in step: then no lease is taken or used. */
  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; logger: Logger },
    private readonly epoch: () => number | null = () => null,
  ) {}

  spend(apiKeyId: string): Promise<KeyUseDecision> {
    const queue = this.waiting.get(apiKeyId);
    if (!queue) {
      const fromLease = this.fromLease(apiKeyId, this.deps.clock.now());
      if (fromLease) return Promise.resolve(fromLease);
    }
    return new Promise((resolve, reject) => {
      if (queue) queue.push({ resolve, reject });
      else {
        this.waiting.set(apiKeyId, [{ resolve, reject }]);
        const drained = this.drain(apiKeyId).finally(() => this.draining.delete(drained));
        this.draining.add(drained);
      }
    });
  }

  /** Gives back every lease and takes no more (at shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.sweep);
    this.sweep = undefined;
    // A statement in flight was asked for a lease before `stopped`: what it takes is given back by keep().
    await Promise.all(this.draining);
    await this.giveBackAll();
  }

  /** Gives back every lease now; resolves when the database has them. */
  async giveBackAll(): Promise<void> {
    for (const [id, lease] of this.leases) this.giveBack(id, lease);
    this.leases.clear();
    await Promise.all(this.givingBack);
  }

  /** One use from the key's lease, when it holds one still good; else undefined (and a lease gone stale is given back). */
  private fromLease(apiKeyId: string, now: Date): KeyUseDecision | undefined {
    const lease = this.leases.get(apiKeyId);
    if (!lease || lease.left === 0) return undefined;
    if (lease.until !== null && now >= lease.until) {
      lease.left = 0; // its period is over: its uses went with it, as a refill replaces unspent ones
      return undefined;
    }
    if (lease.epoch !== this.epoch() || performance.now() - lease.takenAtMs >= LEASE_LIFE_MS) {
      this.leases.delete(apiKeyId);
      this.giveBack(apiKeyId, lease);
      return undefined;
    }
    lease.left--;
    return { allowed: true, remaining: lease.remainingAfter + lease.left, refillInSeconds: refillIn(lease.until, now), refill: lease.refill };
  }

  private async drain(apiKeyId: string): Promise<void> {
    const queue = this.waiting.get(apiKeyId)!;
    while (queue.length > 0) {
      // Requests that arrived while the last statement ran, served by the lease it took.
      const now = this.deps.clock.now();
      for (let decision; queue.length > 0 && (decision = this.fromLease(apiKeyId, now)); ) queue.shift()!.resolve(decision);
      if (queue.length === 0) break;
      const batch = queue.splice(0, MOST_PER_STATEMENT);
      try {
        const epoch = this.epoch();
        const previous = this.leases.get(apiKeyId);
        const extra = epoch === null || this.stopped ? 0 : Math.min(MOST_LEASED, previous ? Math.max(1, previous.size * 2) : 0);
        const taken = await takeUses(this.deps.db, apiKeyId, batch.length, extra, now);
        this.keep(apiKeyId, taken, extra, epoch);
        batch.forEach((request, i) => request.resolve(taken.decisions[i]!));
      } catch (err) {
        for (const request of batch) request.reject(err);
      }
    }
    this.waiting.delete(apiKeyId);
  }

  /** Keeps what a statement took beyond its requests, or notes the key's demand for the next one. */
  private keep(apiKeyId: string, taken: Taken, asked: number, epoch: number | null) {
    const stale = this.leases.get(apiKeyId);
    if (stale && stale.left > 0) this.giveBack(apiKeyId, stale);
    if (taken.remaining === null || taken.refilledAt === null || taken.version === null) {
      // Nothing left to lease (or no limit any more): a lease starts again from nothing.
      this.leases.delete(apiKeyId);
      return;
    }
    if (epoch === null || epoch !== this.epoch() || this.stopped) {
      // Heard something while the statement ran (or not in step, or stopping): what it took beyond its requests goes back.
      this.leases.delete(apiKeyId);
      if (taken.leased > 0) this.giveBack(apiKeyId, { left: taken.leased, refilledAt: taken.refilledAt, version: taken.version });
      return;
    }
    this.leases.set(apiKeyId, {
      left: taken.leased,
      size: Math.max(asked, 1),
      remainingAfter: taken.remaining,
      refilledAt: taken.refilledAt,
      version: taken.version,
      epoch,
      until: taken.until,
      refill: taken.refill,
      takenAtMs: performance.now(),
    });
    this.sweep ??= setInterval(() => this.giveBackAged(), SWEEP_MS).unref();
  }

  /** Gives back the leases taken LEASE_LIFE_MS ago, whether their key is still asked or not. */
  private giveBackAged() {
    const now = performance.now();
    for (const [id, lease] of this.leases) {
      if (now - lease.takenAtMs < LEASE_LIFE_MS || this.waiting.has(id)) continue;
      this.leases.delete(id);
      this.giveBack(id, lease);
    }
    if (this.leases.size === 0) {
      clearInterval(this.sweep);
      this.sweep = undefined;
    }
  }

  private giveBack(apiKeyId: string, lease: Pick<Lease, 'left' | 'refilledAt' | 'version'> & { until?: Date | null }) {
    const n = lease.left;
    lease.left = 0;
    if (n === 0 || (lease.until && this.deps.clock.now() >= lease.until)) return;
    const done = giveBackUses
      .execute(this.deps.db, { id: apiKeyId, n, version: lease.version, refilledAt: lease.refilledAt })
      .then(
        () => {},
        (err: unknown) => this.deps.logger.warn({ err: { message: (err as Error).message }, apiKeyId, uses: n }, 'could not give back leased key uses; they stay spent'),
      )
      .finally(() => this.givingBack.delete(done));
    this.givingBack.add(done);
  }
}
