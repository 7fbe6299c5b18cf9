// Retention: events older than AUDIT_RETENTION_DAYS are deleted, a whole sealed batch at a time and
// oldest batch first, once its newest event is past the retention. The batch's seal stays (a few
// hundred bytes) with `events_deleted_at` set, so the chain of seals still verifies end to end and
// the batches still present are re-hashed against their seals (src/audit/verify.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { tryChainLock } from './seal.js';

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
