// What waits in the outbox of mail, for the metrics: messages to be sent or retried, messages given
// up, and how long the oldest waiting one has waited. Reads the partial index of unsent messages.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

export async function mailBacklog(db: Kysely<Database>, now: Date): Promise<{ waiting: number; failed: number; oldestWaitingS: number }> {
  const { rows } = await sql<{ waiting: string; failed: string; oldest: Date | null }>`
    select count(*) filter (where failed_at is null) as waiting,
           count(*) filter (where failed_at is not null) as failed,
           min(created_at) filter (where failed_at is null) as oldest
    from messages where sent_at is null`.execute(db);
  const row = rows[0]!;
  const oldest = row.oldest === null ? 0 : Math.max(0, (now.getTime() - new Date(row.oldest).getTime()) / 1000);
  return { waiting: Number(row.waiting), failed: Number(row.failed), oldestWaitingS: oldest };
}
