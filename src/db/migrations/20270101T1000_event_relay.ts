// The relay of events to webhook deliveries (docs/EVENTS.md, "Fan-out"): a change writes
// only its event; the delivery workers fan events out to the endpoints subscribed to them, walking
// events in (xid, seq) order from the position kept here (one row, locked by the worker that
// relays), and the feed walks the same order (its cursor holds both).
//
// Why (xid, seq) and not `seq` alone: `seq` is taken when a transaction writes its event, its `xid`
// at its first write, so a transaction that began later can commit an earlier `seq`; walking `seq`
// under the rule "xid below the snapshot's xmin" steps over an event committed late by a
// transaction that began after another. In (xid, seq) order every event below xmin is final
// (committed, or gone with a rollback) and every event that can still appear has an xid at or
// above xmin, so above the position.
//
// Events written before this migration already have their deliveries (the recorder made them in
// the change's statement), so the relay starts after the newest of them.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_xid_seq_idx').on('events').columns(['xid', 'seq']).execute();
  await db.schema
    .createTable('event_relay')
    .addColumn('id', 'integer', (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn('last_xid', sql`xid8`, (c) => c.notNull())
    .addColumn('last_seq', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into event_relay (id, last_xid, last_seq)
    select 1, coalesce(max(xid), '0'::xid8), coalesce(max(seq), 0) from (select xid, seq from events order by xid desc, seq desc limit 1) as newest`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('event_relay').execute();
  await db.schema.dropIndex('events_xid_seq_idx').execute();
}
