// A fingerprint of every application table's content, to prove that a refused request changed
// nothing (no partial write): compare the digests taken before and after it.
import { sql, type Kysely } from 'kysely';

export type TableDigests = Record<string, string>;

/**
 * Tables a refused request may write on purpose (a failed sign-in counts against the throttle and
 * is recorded as a security event); everything else must be untouched by a refused request.
 */
// rate_limit_counters and api_key_usage: a refused request is counted too (usage by outcome), and
// each process's reconciliation writes them in the background, whichever request is running.
export const WRITTEN_WHEN_REFUSED = new Set<string>(['sign_in_failures', 'step_up_refusals', 'security_events', 'rate_limit_counters', 'api_key_usage']);

/**
 * Columns a refused request may write on purpose: an API key that authenticated was used, whatever
 * becomes of the request after (403, 400, 404), so its last-used time and IP are recorded (at most
 * once a minute). The rest of the api_keys row must stay untouched.
 */
// `version` moves with them: the key's last use is part of its representation, so its entity tag
// changes too (docs/SAFE-WRITES.md).
export const COLUMNS_WRITTEN_WHEN_REFUSED: Record<string, string[]> = { api_keys: ['last_used_at', 'last_used_ip', 'version'] };

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function tableNames(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = 'public' and table_type = 'BASE TABLE' and table_name not like 'kysely_%'
    order by table_name`.execute(db);
  return rows.map((r) => r.name).filter((name) => !WRITTEN_WHEN_REFUSED.has(name));
}

/** One query: the md5 of each table's rows in a stable order (without the columns above). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function digestTables(db: Kysely<any>, tables: string[]): Promise<TableDigests> {
  if (tables.length === 0) return {};
  const parts = tables.map((name) => {
    const row = sql`(to_jsonb(t) - ${sql.val(COLUMNS_WRITTEN_WHEN_REFUSED[name] ?? [])}::text[])::text`;
    return sql`select ${name} as name, md5(coalesce(string_agg(${row}, ',' order by ${row}), '')) as digest from ${sql.table(name)} t`;
  });
  const { rows } = await sql<{ name: string; digest: string }>`${sql.join(parts, sql` union all `)}`.execute(db);
  return Object.fromEntries(rows.map((r) => [r.name, r.digest]));
}

/** Names of the tables whose digest differs. */
export function changedTables(before: TableDigests, after: TableDigests): string[] {
  return Object.keys({ ...before, ...after }).filter((name) => before[name] !== after[name]);
}
