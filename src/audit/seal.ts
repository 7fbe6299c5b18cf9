// Sealing: the periodic maintenance step (src/maintenance) takes the events not sealed yet, in id
// order, in batches; stamps each with its content hash and its seal; and appends one seal per
// batch, whose hash covers the previous seal's hash and the batch. Events are hashed under the
// current formula (version 2, src/audit/hash.ts): the sealer gives each personal group of each
// event a fresh random salt and stores it with the group's digest. Inserting an event takes no
// lock and waits for nothing: an event committed late (a lower id than the last sealed one) is
// simply in the next batch. One sealer at a time (an advisory lock only sealers and retention take).
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { CURRENT_EVENT_HASH_VERSION, GENESIS, GROUP_NAMES, batchHash, eventHashV2, groupDigest, groupValues, newSalt, sealHash, selectEventsToHash, type GroupDigests, type PersonalGroup } from './hash.js';

export const SEAL_BATCH_SIZE = 10_000;

/** Taken by sealing and retention, never by inserts: they change the seal chain one at a time. */
export async function tryChainLock(trx: Transaction<Database>): Promise<boolean> {
  const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_xact_lock(3, 0) as locked`.execute(trx);
  return rows[0]?.locked === true;
}

/**
 * The same lock, waited for: an erasure of personal columns takes it, so no sealer reads an event
 * before the erasure and stamps it after (its salt and digest of the erased values would be kept).
 */
export async function waitForChainLock(trx: Kysely<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(3, 0)`.execute(trx);
}

/** A Date (milliseconds) printed as PostgreSQL prints a timestamptz to the microsecond. */
export const microsOf = (at: Date) => at.toISOString().replace(/Z$/, '000Z');

/** Seals one batch; the number of events sealed (0: none waiting), or null when another process is sealing. */
async function sealBatch(db: Kysely<Database>, now: Date, batchSize: number): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryChainLock(trx))) return null;
    const events = await selectEventsToHash(trx).where('seal_id', 'is', null).limit(batchSize).execute();
    if (events.length === 0) return 0;
    const salted = events.map((event) => {
      const salts = Object.fromEntries(GROUP_NAMES.map((g) => [g, newSalt()])) as Record<PersonalGroup, Buffer>;
      const digests = Object.fromEntries(GROUP_NAMES.map((g) => [g, groupDigest(salts[g], groupValues(event, g))])) as GroupDigests;
      return { salts, digests, hash: eventHashV2(event, digests) };
    });
    const hashes = salted.map((s) => s.hash);
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
      event_hash_version: CURRENT_EVENT_HASH_VERSION,
    };
    await trx.insertInto('audit_seals').values({ ...facts, hash: sealHash(facts) }).execute();
    const ids = events.map((e) => String(e.id));
    const hex = (pick: (s: (typeof salted)[number]) => Buffer) => salted.map((s) => pick(s).toString('hex'));
    await sql`
      update security_events e set seal_id = ${facts.id}::bigint, hash = decode(v.hash, 'hex'),
        who_salt = decode(v.who_salt, 'hex'), who_digest = decode(v.who_digest, 'hex'),
        where_salt = decode(v.where_salt, 'hex'), where_digest = decode(v.where_digest, 'hex'),
        what_salt = decode(v.what_salt, 'hex'), what_digest = decode(v.what_digest, 'hex')
      from unnest(${ids}::bigint[], ${hex((s) => s.hash)}::text[],
        ${hex((s) => s.salts.who)}::text[], ${hex((s) => s.digests.who)}::text[],
        ${hex((s) => s.salts.where)}::text[], ${hex((s) => s.digests.where)}::text[],
        ${hex((s) => s.salts.what)}::text[], ${hex((s) => s.digests.what)}::text[])
        as v(id, hash, who_salt, who_digest, where_salt, where_digest, what_salt, what_digest)
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
