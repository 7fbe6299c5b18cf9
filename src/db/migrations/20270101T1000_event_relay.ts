// The relay of events to webhook deliveries (issue 30, docs/EVENTS.md "Fan-out"): a change writes
// only its event; the delivery workers fan events out to the endpoints subscribed to them, walking
// `events.seq` from the position kept here (one row, locked by the worker that relays). Events
// written before this migration already have their deliveries (the recorder made them in the
// change's statement), so the relay starts after the last of them.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('event_relay')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into event_relay (id, last_seq) select 1, coalesce(max(seq), 0) from events`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_relay').execute();
}
