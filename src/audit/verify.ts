// Verifies the seal chain end to end and re-hashes every batch still present. Stops at the first
// seal or event that does not match and names it. Events not sealed yet cannot be checked: they
// are counted. What no chain can show without an outside copy is the removal of the newest seals
// with their events: compare the printed head hash with one kept elsewhere.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { GENESIS, batchHash, eventHash, selectEventsToHash, selectSeals, sealHash } from './hash.js';

export interface VerifyReport {
  ok: boolean;
  /** The first mismatch, in words, naming the seal or the event. */
  problem: string | null;
  seals: number;
  /** Seals whose events retention deleted (their hashes are still checked in the chain). */
  sealsWithoutEvents: number;
  eventsChecked: number;
  eventsNotYetSealed: number;
  /** The hash of the newest seal, hex (keep a copy elsewhere to detect removal of the newest seals). */
  head: string | null;
}

const SEAL_PAGE = 500;

export async function verifyAuditTrail(db: Kysely<Database>, options: { now: Date; retentionS: number }): Promise<VerifyReport> {
  const report: VerifyReport = { ok: true, problem: null, seals: 0, sealsWithoutEvents: 0, eventsChecked: 0, eventsNotYetSealed: 0, head: null };
  const fail = (problem: string) => ({ ...report, ok: false, problem });
  const cutoff = new Date(options.now.getTime() - options.retentionS * 1000);
  let previous: { id: string | null; hash: Buffer } = { id: null, hash: GENESIS };
  let eventsStillPresent = false;

  for (let after = '0'; ; ) {
    const seals = await selectSeals(db).where('id', '>', after).limit(SEAL_PAGE).execute();
    if (seals.length === 0) break;
    for (const seal of seals) {
      const follows = previous.id === null ? 'the start of the chain' : `seal ${previous.id}`;
      if (!seal.previous_hash.equals(previous.hash)) return fail(`Seal ${seal.id} does not follow ${follows}: a seal was removed, added or altered.`);
      if (!sealHash(seal).equals(seal.hash)) return fail(`Seal ${seal.id} does not match its own hash: it was altered.`);
      if (seal.events_deleted_at !== null) {
        // Retention deletes whole batches, oldest first, once their newest event is past the retention.
        if (eventsStillPresent) return fail(`Seal ${seal.id} has lost its events while older seals keep theirs: they were not deleted by retention.`);
        if (new Date(seal.newest_event_at) >= cutoff) return fail(`Seal ${seal.id} has lost its events before their retention ended.`);
        const left = await db.selectFrom('security_events').select('id').where('seal_id', '=', seal.id).limit(1).executeTakeFirst();
        if (left) return fail(`Event ${left.id} is left from seal ${seal.id}, whose events retention deleted.`);
        report.sealsWithoutEvents += 1;
      } else {
        eventsStillPresent = true;
        const events = await selectEventsToHash(db).where('seal_id', '=', seal.id).execute();
        const hashes: Buffer[] = [];
        for (const event of events) {
          const hash = eventHash(event);
          if (!event.hash || !hash.equals(event.hash)) return fail(`Event ${event.id} does not match seal ${seal.id}: it was altered after sealing.`);
          hashes.push(hash);
        }
        if (events.length !== seal.event_count) {
          return fail(`Seal ${seal.id} covers ${seal.event_count} events (ids ${seal.first_event_id} to ${seal.last_event_id}) but ${events.length} are there: events were deleted or added.`);
        }
        if (!batchHash(hashes).equals(seal.batch_hash)) return fail(`The events of seal ${seal.id} do not match it: events were replaced.`);
        report.eventsChecked += events.length;
      }
      report.seals += 1;
      previous = { id: seal.id, hash: seal.hash };
      after = seal.id;
    }
  }
  report.head = previous.id === null ? null : previous.hash.toString('hex');

  // An event naming a seal that is not in the chain, or carrying a hash without a seal (taken out of its batch).
  const stray = await db
    .selectFrom('security_events as e')
    .select(['e.id', 'e.seal_id'])
    .where((eb) =>
      eb.or([
        eb.and([eb('e.seal_id', 'is not', null), eb.not(eb.exists(eb.selectFrom('audit_seals as s').select('s.id').whereRef('s.id', '=', 'e.seal_id')))]),
        eb.and([eb('e.seal_id', 'is', null), eb('e.hash', 'is not', null)]),
      ]),
    )
    .orderBy('e.id')
    .limit(1)
    .executeTakeFirst();
  if (stray) return fail(stray.seal_id === null ? `Event ${stray.id} was taken out of its seal.` : `Event ${stray.id} names seal ${stray.seal_id}, which is not in the chain.`);

  const { rows } = await sql<{ count: string }>`select count(*) as count from security_events where seal_id is null`.execute(db);
  report.eventsNotYetSealed = Number(rows[0]?.count ?? 0);
  return report;
}
