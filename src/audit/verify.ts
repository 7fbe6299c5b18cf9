// Verifies the seal chain end to end and re-hashes every batch still present. Stops at the first
// seal or event that does not match and names it. Events not sealed yet cannot be checked: they
// are counted. What no chain can show without an outside copy is the removal of the newest seals
// with their events: compare the printed head hash with one kept elsewhere.
//
// Erased personal columns (docs/ERASURE.md): an event of a version-2 seal whose group lost its
// salt is hashed with the group's stored digest, once its columns are checked to be erased and the
// erasure to be one that happened: an erasure of a person the event concerns (its user, actor,
// target, or the person its erasure names in erased_for), recorded as `user_erased` after the
// event (a higher id), or, for the address group alone, the event is older than
// the sign-in address retention. An event of a version-1 seal marked erased is judged by its stored
// hash, which its batch hash covers, under the same two conditions. Anything else is named.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { GENESIS, GROUP_NAMES, PERSONAL_GROUPS, batchHash, eventHashV1, eventHashV2, groupDigest, groupValues, selectEventsToHash, selectSeals, sealHash, type GroupDigests, type HashedEventRow, type PersonalGroup } from './hash.js';

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

/** What an erased personal column holds: nothing (details, which may not be null, an empty object). */
export function isErasedValue(column: string, value: unknown): boolean {
  if (column === 'details') return value !== null && typeof value === 'object' && Object.keys(value).length === 0;
  return value === null;
}

const isGroupErased = (event: HashedEventRow, group: PersonalGroup) => PERSONAL_GROUPS[group].every((column) => isErasedValue(column, event[column]));

/**
 * The people whose erasure is recorded, with the id of its event: the only ones whose events may
 * have lost personal columns. By id, not time: an erasure scrubs only committed events and records
 * itself after, so its event's id is above every id it erased, whatever the clocks of the
 * processes that recorded them said.
 */
async function erasedPeople(db: Kysely<Database>): Promise<Map<string, bigint>> {
  const rows = await db.selectFrom('security_events').select(['target_id', 'id']).where('type', '=', 'user_erased').where('target_id', 'is not', null).execute();
  const erased = new Map<string, bigint>();
  for (const r of rows) erased.set(r.target_id!, [erased.get(r.target_id!) ?? 0n, BigInt(r.id)].reduce((a, b) => (a > b ? a : b)));
  return erased;
}

export interface VerifyOptions {
  now: Date;
  retentionS: number;
  /** The sign-in address retention (SIGN_IN_ADDRESS_RETENTION_DAYS): older events may have lost their address group. */
  signInAddressRetentionS?: number;
}

export async function verifyAuditTrail(db: Kysely<Database>, options: VerifyOptions): Promise<VerifyReport> {
  const report: VerifyReport = { ok: true, problem: null, seals: 0, sealsWithoutEvents: 0, eventsChecked: 0, eventsNotYetSealed: 0, head: null };
  const fail = (problem: string) => ({ ...report, ok: false, problem });
  const cutoff = new Date(options.now.getTime() - options.retentionS * 1000);
  let previous: { id: string | null; hash: Buffer } = { id: null, hash: GENESIS };
  let eventsStillPresent = false;
  const erased = await erasedPeople(db);
  const addressCutoff = options.signInAddressRetentionS === undefined ? null : new Date(options.now.getTime() - options.signInAddressRetentionS * 1000).toISOString();
  // An erasure vouches for the events recorded before it of the person it erased: by their user,
  // actor or target, or (an event naming them only in its text) by erased_for.
  const vouched = (e: HashedEventRow) => [e.user_id, e.actor_id, e.target_id, e.erased_for].some((id) => id !== null && erased.has(id) && erased.get(id)! > BigInt(e.id));
  const altered = (e: HashedEventRow, sealId: string) => `Event ${e.id} does not match seal ${sealId}: it was altered after sealing.`;

  /** The event's hash as verified, or the words naming what is wrong with it. */
  function hashOf(e: HashedEventRow, sealId: string, version: number): Buffer | string {
    if (e.erased_at !== null && !vouched(e)) return `Event ${e.id} of seal ${sealId} is marked erased, but no erasure of a person it concerns is recorded: it was altered after sealing.`;
    if (version === 1) {
      if (e.erased_at === null) return eventHashV1(e);
      if (!GROUP_NAMES.every((g) => isGroupErased(e, g)) || !e.hash) return altered(e, sealId);
      return e.hash;
    }
    const digests = {} as GroupDigests;
    for (const group of GROUP_NAMES) {
      const salt = e[`${group}_salt`];
      const stored = e[`${group}_digest`];
      if (salt !== null) {
        const digest = groupDigest(salt, groupValues(e, group));
        if (!stored || !digest.equals(stored)) return altered(e, sealId);
        digests[group] = digest;
        continue;
      }
      // Erased: nothing left of the group, and an erasure that may have erased it.
      if (!stored || !isGroupErased(e, group)) return altered(e, sealId);
      const byRetention = group === 'where' && addressCutoff !== null && e.occurred_at < addressCutoff;
      if (e.erased_at === null && !byRetention) return `Event ${e.id} of seal ${sealId} has lost its ${group} columns, but neither an erasure nor the sign-in address retention explains it: it was altered after sealing.`;
      digests[group] = stored;
    }
    return eventHashV2(e, digests);
  }

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
          const hash = hashOf(event, seal.id, seal.event_hash_version);
          if (typeof hash === 'string') return fail(hash);
          if (!event.hash || !hash.equals(event.hash)) return fail(altered(event, seal.id));
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
