// Each key's requests per hour by outcome. Counted in memory on every request and written in
// batches, with the rate-limit reconciliation (never a write per request); kept USAGE_RETENTION_DAYS.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export const USAGE_OUTCOMES = ['allowed', 'rate_limited', 'ip_refused', 'permission_refused'] as const;
export type UsageOutcome = (typeof USAGE_OUTCOMES)[number];

/** How long a key's hourly counts are kept (the maintenance step deletes older ones). */
export const USAGE_RETENTION_DAYS = 90;

const HOUR_MS = 3_600_000;

interface HourCounts {
  apiKeyId: string;
  hour: number;
  counts: Record<UsageOutcome, number>;
}

export class UsageCounter {
  private hours = new Map<string, HourCounts>();

  count(apiKeyId: string, outcome: UsageOutcome, at: Date): void {
    const hour = at.getTime() - (at.getTime() % HOUR_MS);
    const id = `${apiKeyId}@${hour}`;
    let entry = this.hours.get(id);
    if (entry === undefined) {
      entry = { apiKeyId, hour, counts: { allowed: 0, rate_limited: 0, ip_refused: 0, permission_refused: 0 } };
      this.hours.set(id, entry);
    }
    entry.counts[outcome]++;
  }

  /** Writes what was counted since the last flush in one statement; kept for the next one if it fails. */
  async flush(db: Kysely<Database>): Promise<void> {
    if (this.hours.size === 0) return;
    const batch = [...this.hours.values()];
    this.hours = new Map();
    try {
      const column = (outcome: UsageOutcome) => batch.map((e) => e.counts[outcome]);
      await sql`
        insert into api_key_usage as u (api_key_id, hour, allowed, rate_limited, ip_refused, permission_refused)
        select * from unnest(${batch.map((e) => e.apiKeyId)}::uuid[], ${batch.map((e) => new Date(e.hour).toISOString())}::timestamptz[],
          ${column('allowed')}::bigint[], ${column('rate_limited')}::bigint[], ${column('ip_refused')}::bigint[], ${column('permission_refused')}::bigint[])
        on conflict (api_key_id, hour) do update set
          allowed = u.allowed + excluded.allowed, rate_limited = u.rate_limited + excluded.rate_limited,
          ip_refused = u.ip_refused + excluded.ip_refused, permission_refused = u.permission_refused + excluded.permission_refused`.execute(db);
    } catch (err) {
      for (const entry of batch) {
        for (const outcome of USAGE_OUTCOMES) {
          if (entry.counts[outcome] > 0) this.addBack(entry, outcome);
        }
      }
      throw err;
    }
  }

  private addBack(entry: HourCounts, outcome: UsageOutcome) {
    const id = `${entry.apiKeyId}@${entry.hour}`;
    let current = this.hours.get(id);
    if (current === undefined) {
      current = { apiKeyId: entry.apiKeyId, hour: entry.hour, counts: { allowed: 0, rate_limited: 0, ip_refused: 0, permission_refused: 0 } };
      this.hours.set(id, current);
    }
    current.counts[outcome] += entry.counts[outcome];
  }
}

export interface UsageHour {
  hour: Date;
  allowed: number;
  rate_limited: number;
  ip_refused: number;
  permission_refused: number;
}

/** A key's hours in [from, until), oldest first; hours without a request are absent. */
export async function readUsage(db: Kysely<Database>, apiKeyId: string, from: Date, until: Date): Promise<UsageHour[]> {
  const rows = await db
    .selectFrom('api_key_usage')
    .select(['hour', 'allowed', 'rate_limited', 'ip_refused', 'permission_refused'])
    .where('api_key_id', '=', apiKeyId)
    .where('hour', '>=', from)
    .where('hour', '<', until)
    .orderBy('hour')
    .execute();
  return rows.map((r) => ({
    hour: r.hour,
    allowed: Number(r.allowed),
    rate_limited: Number(r.rate_limited),
    ip_refused: Number(r.ip_refused),
    permission_refused: Number(r.permission_refused),
  }));
}

/** Deletes the hours past the retention (the maintenance step). */
export async function deleteOldUsage(db: Kysely<Database>, now: Date): Promise<number> {
  const before = new Date(now.getTime() - USAGE_RETENTION_DAYS * 86_400_000);
  const result = await db.deleteFrom('api_key_usage').where('hour', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
