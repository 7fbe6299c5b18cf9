// The audit events one person did or that concern them, oldest first, a page at a time from a
// keyset position: the walk of a person's export (src/personal-data). Beside the journal's other
// reads, since it reads the same columns the listing and the seal do.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';
import { EVENT_COLUMNS, type ListedAuditEvent } from './repository.js';
import type { Position } from '../pagination/position.js';

/**
 * The events the person did or that concern them, oldest first. Two index walks, one per column
 * (security_events_user_time_idx, security_events_actor_time_idx), each stopped at `limit`, merged
 * and cut again: an `or` of the two columns would read every matching row on every page.
 */
export function auditEventsInvolvingPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number): Promise<(ListedAuditEvent & { position_at: string })[]> {
  const from = position ? sql`and (occurred_at, id) > (${position.at}::timestamptz, ${position.id}::bigint)` : sql``;
  const keys = sql`
    select id from (
      (select occurred_at, id from security_events where user_id = ${userId} ${from} order by occurred_at, id limit ${limit})
      union
      (select occurred_at, id from security_events where actor_id = ${userId} ${from} order by occurred_at, id limit ${limit})
    ) k order by occurred_at, id limit ${limit}`;
  return db
    .selectFrom('security_events')
    .select(EVENT_COLUMNS)
    .select([isoMillis('occurred_at').as('occurred_at'), isoMicros('occurred_at').as('cursor_occurred_at'), isoMicros('occurred_at').as('position_at')])
    .where(sql<boolean>`id in (${keys})`)
    .orderBy('occurred_at')
    .orderBy('id')
    .execute() as Promise<(ListedAuditEvent & { position_at: string })[]>;
}
