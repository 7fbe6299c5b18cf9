// Retention: events older than AUDIT_RETENTION_DAYS are deleted, a whole sealed batch at a time and
// oldest batch first, once its newest event is past the retention. The batch's seal stays (a few
// hundred bytes) with `events_deleted_at` set, so the chain of seals still verifies end to end and
// the batches still present are re-hashed against their seals (src/audit/verify.ts). Sooner, after
// SIGN_IN_ADDRESS_RETENTION_DAYS, the address and user agent of each sealed event are erased.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { tryChainLock } from './seal.js';

/** Events whose addresses one statement erases: a short transaction under the chain lock. */
const ADDRESS_BATCH = 5000;

/**
 * Erases the address group (ip_address, user_agent) of sealed events older than the sign-in
 * address retention, the way an erasure does (src/audit/hash.ts): columns and salt gone, digest
 * kept, so the seal still verifies (src/audit/verify.ts accepts it for events past the retention).
 * Events of version-1 seals are left as they are (their hash covers the address unsalted: they go
 * whole with AUDIT_RETENTION_DAYS), and events not sealed yet wait for their seal. How many events.
 */
export async function eraseExpiredSignInAddresses(db: Kysely<Database>, now: Date, retentionS: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionS * 1000);
  let erased = 0;
  for (;;) {
    const done = await db.transaction().execute(async (trx) => {
      if (!(await tryChainLock(trx))) return null;
      const result = await sql`
        update security_events set ip_address = null, user_agent = null, where_salt = null
        where id in (
          select id from security_events
          where occurred_at < ${cutoff} and where_salt is not null and (ip_address is not null or user_agent is not null)
          limit ${ADDRESS_BATCH})`.execute(trx);
      return Number(result.numAffectedRows ?? 0);
    });
    if (done === null) return erased;
    erased += done;
    if (done < ADDRESS_BATCH) return erased;
  }
}

/** Deletes the events of expired batches; how many events were deleted. */
export async function deleteExpiredAuditEvents(db: Kysely<Database>, now: Date, retentionS: number): Promise<number> {
  const cutoff = new Date(now.getTime() - retentionS * 1000);
  let deleted = 0;
  for (;;) {
    const done = await db.transaction().execute(async (trx) => {
      if (!(await tryChainLock(trx))) return null;
      const seal = await trx
        .selectFrom('audit_seals')
        .select(['id', 'newest_event_at'])
        .where('events_deleted_at', 'is', null)
        .orderBy('id')
        .limit(1)
        .executeTakeFirst();
      // Oldest batch first: a younger batch behind a batch still kept waits its turn.
      if (!seal || seal.newest_event_at >= cutoff) return null;
      const result = await trx.deleteFrom('security_events').where('seal_id', '=', seal.id).executeTakeFirst();
      await trx.updateTable('audit_seals').set({ events_deleted_at: now }).where('id', '=', seal.id).execute();
      return Number(result.numDeletedRows);
    });
    if (done === null) return deleted;
    deleted += done;
  }
}
