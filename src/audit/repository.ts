// Reading the journal: pages newest first by (occurred_at, id), and sign-ins per hour.
import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import type { Database, SecurityEventsTable } from '../db/schema.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';

/** A position in the journal: the (occurred_at, id) of the last event of a page, walked on from (signed for clients by cursor.ts). */
export interface AuditCursor {
  occurredAt: string;
  id: string;
}

export interface AuditFilter {
  types?: readonly string[];
  actorType?: string;
  actorId?: string;
  targetType?: string;
  targetId?: string;
  /** The person concerned. */
  userId?: string;
  /** Events the person did or that concern them (GET /me/audit-events). */
  involving?: string;
  since?: Date;
  before?: Date;
}

/** A journal row as the audit trail reads it: `occurred_at` as PostgreSQL prints it, to the microsecond (text, not a Date). */
export type AuditEventRow = Omit<Selectable<SecurityEventsTable>, 'occurred_at' | 'seal_id' | SealColumn> & { occurred_at: string };

/** What the sealer adds to an event beside its hash (src/audit/hash.ts), and the mark of an erasure. */
export type SealColumn = 'who_salt' | 'who_digest' | 'where_salt' | 'where_digest' | 'what_salt' | 'what_digest' | 'erased_at' | 'erased_for';

export type ListedAuditEvent = Omit<AuditEventRow, 'session_id' | 'hash'> & {
  /** The position of the row in the list, for the next page's cursor. */
  cursor_occurred_at: string;
};

type EventQuery = SelectQueryBuilder<Database, 'security_events', object>;

function applyFilter(query: EventQuery, filter: AuditFilter): EventQuery {
  let q = query;
  if (filter.types?.length) q = q.where('type', 'in', [...filter.types]);
  if (filter.actorType) q = q.where('actor_type', '=', filter.actorType);
  if (filter.actorId) q = q.where('actor_id', '=', filter.actorId);
  if (filter.targetType) q = q.where('target_type', '=', filter.targetType);
  if (filter.targetId) q = q.where('target_id', '=', filter.targetId);
  if (filter.userId) q = q.where('user_id', '=', filter.userId);
  if (filter.involving) {
    const me = filter.involving;
    q = q.where((eb) => eb.or([eb('user_id', '=', me), eb('actor_id', '=', me)]));
  }
  if (filter.since) q = q.where('occurred_at', '>=', filter.since);
  if (filter.before) q = q.where('occurred_at', '<', filter.before);
  return q;
}

/** The columns of an event the audit trail reads (besides its time, printed: `isoMicros`), listing and hashing alike. */
export const EVENT_COLUMNS = [
  'id',
  'type',
  'user_id',
  'actor_type',
  'actor_id',
  'actor_session_id',
  'actor_label',
  'target_type',
  'target_id',
  'target_label',
  'ip_address',
  'user_agent',
  'request_id',
  'details',
  'changes',
] as const;

/** One page, newest first; `limit + 1` rows tell whether more follow. */
export function listAuditPage(db: Kysely<Database>, options: { limit: number; after?: AuditCursor; filter: AuditFilter }): Promise<ListedAuditEvent[]> {
  let query = applyFilter(db.selectFrom('security_events'), options.filter);
  if (options.after) {
    query = query.where(sql<boolean>`(occurred_at, id) < (${options.after.occurredAt}::timestamptz, ${options.after.id}::bigint)`);
  }
  return query
    .select(EVENT_COLUMNS)
    .select(isoMillis('occurred_at').as('occurred_at'))
    .select(isoMicros('occurred_at').as('cursor_occurred_at'))
    .orderBy('occurred_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit + 1)
    .execute() as Promise<ListedAuditEvent[]>;
}

export interface HourCount {
  hour: Date;
  succeeded: number;
  failed: number;
  throttled: number;
}

/** Sign-in attempts per hour from `from` (an hour's start) for `hours` hours, empty hours included. */
export async function countSignInsPerHour(db: Kysely<Database>, from: Date, hours: number): Promise<HourCount[]> {
  const { rows } = await sql<{ hour: Date; succeeded: number; failed: number; throttled: number }>`
    select h.hour,
      count(e.id) filter (where e.type = 'sign_in_succeeded')::int as succeeded,
      count(e.id) filter (where e.type = 'sign_in_failed')::int as failed,
      count(e.id) filter (where e.type = 'sign_in_throttled')::int as throttled
    from generate_series(${from}::timestamptz, ${from}::timestamptz + make_interval(hours => ${hours - 1}), interval '1 hour') as h(hour)
    left join security_events e
      on e.type in ('sign_in_succeeded', 'sign_in_failed', 'sign_in_throttled')
      and e.occurred_at >= h.hour and e.occurred_at < h.hour + interval '1 hour'
    group by h.hour
    order by h.hour`.execute(db);
  return rows;
}
