// Sealing: the periodic maintenance step (src/maintenance) takes the events not sealed yet, in id
// order, in batches; stamps each with its content hash and its seal; and appends one seal per
// batch, whose hash covers the previous seal's hash and the batch. Inserting an event takes no
// lock and waits for nothing: an event committed late (a lower id than the last sealed one) is
// simply in the next batch. One sealer at a time (an advisory lock only sealers and retention take).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { GENESIS, batchHash, eventHash, sealHash, selectEventsToHash } from './hash.js';

export const SEAL_BATCH_SIZE = 10_000;

/** Taken by sealing and retention, never by inserts: they change the seal chain one at a time. */
export async function tryChainLock(trx: Transaction<Database>): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(3, 0) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/** A Date (milliseconds) printed as PostgreSQL prints a timestamptz to the microsecond. */
export const microsOf = (at: Date) => at.toISOString().replace(/Z$/, '000Z');

/** Seals one batch; the number of events sealed (0: none waiting), or null when another process is sealing. */
async function sealBatch(db: Kysely<Database>, now: Date, batchSize: number): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryChainLock(trx))) return null;
    const events = await selectEventsToHash(trx).where('seal_id', 'is', null).limit(batchSize).execute();
    if (events.length === 0) return 0;
    const hashes = events.map(eventHash);
    const times = events.map((e) => e.occurred_at).sort();
    const previous = await trx.selectFrom('audit_seals').select('hash').orderBy('id', 'desc').limit(1).executeTakeFirst();
    const { rows } = await sql<{ id: string }>`select nextval('audit_seals_id_seq')::text as id`.execute(trx);
    const facts = {
      id: String(rows[0]!.id),
      sealed_at: microsOf(now),
      event_count: events.length,
      first_event_id: String(events[0]!.id),
      last_event_id: String(events.at(-1)!.id),
      oldest_event_at: times[0]!,
      newest_event_at: times.at(-1)!,
      batch_hash: batchHash(hashes),
      previous_hash: previous?.hash ?? GENESIS,
    };
    await trx.insertInto('audit_seals').values({ ...facts, hash: sealHash(facts) }).execute();
    const ids = events.map((e) => String(e.id));
    const hexes = hashes.map((h) => h.toString('hex'));
    await sql`
      update security_events e set seal_id = ${facts.id}::bigint, hash = decode(v.hash, 'hex')
      from unnest(${ids}::bigint[], ${hexes}::text[]) as v(id, hash)
      where e.id = v.id`.execute(trx);
    return events.length;
  });
}

/** Seals every event waiting; how many events and seals were written. */
export async function sealAuditEvents(db: Kysely<Database>, now: Date, batchSize = SEAL_BATCH_SIZE): Promise<{ events: number; seals: number }> {
  let events = 0;
  let seals = 0;
  for (;;) {
    const sealed = await sealBatch(db, now, batchSize);
    if (!sealed) return { events, seals };
    events += sealed;
    seals += 1;
    if (sealed < batchSize) return { events, seals };
  }
}

/** How long the oldest audit event not sealed yet has waited, in seconds (0 when all are sealed). */
export async function sealLagSeconds(db: Kysely<Database>, now: Date): Promise<number> {
  const oldest = await db.selectFrom('security_events').select('occurred_at').where('seal_id', 'is', null).orderBy('id').limit(1).executeTakeFirst();
  return oldest ? Math.max(0, (now.getTime() - oldest.occurred_at.getTime()) / 1000) : 0;
}
