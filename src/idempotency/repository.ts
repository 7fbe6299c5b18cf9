// Queries on idempotency_keys. Functions take the database or a transaction.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** An answer as stored: its status, the headers that matter, its JSON body as sent, the revision its ETag names. */
export interface StoredAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  revision: string | null;
}

export interface StoredRecord extends StoredAnswer {
  fingerprint: Buffer;
  fingerprint_key_id: string | null;
}

/** stored: the answer is written; in_progress: another request with this key holds it now; taken: a live answer is stored already. */
export type StoreOutcome = 'stored' | 'in_progress' | 'taken';

/**
 * Stores the answer of a create, in the create's transaction, in one statement. The transaction
 * first takes an advisory lock named by the key (held until it ends, never waited for): a request
 * with the same key in a transaction still open holds it, and this one is told so (in_progress)
 * instead of queueing behind it. Holding the lock, any earlier writer of the key has finished, so
 * the insert never waits either: it stores, or finds a committed answer (taken), or replaces one
 * past its expiry that the sweep has not deleted yet.
 */
export async function storeAnswer(
  db: Kysely<Database>,
  row: { keyDigest: Buffer; lockId: bigint; fingerprint: Buffer; fingerprintKeyId: string; answer: StoredAnswer; now: Date; expiresAt: Date },
): Promise<StoreOutcome> {
  const { rows } = await sql<{ free: boolean; stored: boolean }>`
    with claim as materialized (select pg_try_advisory_xact_lock(${row.lockId.toString()}::bigint) as free),
    stored as (
      insert into idempotency_keys (key_digest, fingerprint, fingerprint_key_id, status, headers, body, revision, created_at, expires_at)
      select ${row.keyDigest}, ${row.fingerprint}, ${row.fingerprintKeyId}, ${row.answer.status}, ${JSON.stringify(row.answer.headers)}::jsonb, ${row.answer.body}, ${row.answer.revision},
             ${row.now}, ${row.expiresAt}
      from claim where free
      on conflict (key_digest) do update
        set fingerprint = excluded.fingerprint, fingerprint_key_id = excluded.fingerprint_key_id, status = excluded.status, headers = excluded.headers, body = excluded.body, revision = excluded.revision,
            created_at = excluded.created_at, expires_at = excluded.expires_at
        where idempotency_keys.expires_at <= excluded.created_at
      returning 1
    )
    select free, exists (select 1 from stored) as stored from claim`.execute(db);
  const { free, stored } = rows[0]!;
  return stored ? 'stored' : free ? 'taken' : 'in_progress';
}

/** The live (unexpired) answer stored under this key, if any. */
export async function findAnswer(db: Kysely<Database>, keyDigest: Buffer, now: Date): Promise<StoredRecord | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .select(['fingerprint', 'fingerprint_key_id', 'status', 'headers', 'body', 'revision'])
    .where('key_digest', '=', keyDigest)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Deletes up to `limit` expired answers; the number deleted. */
export async function deleteExpiredAnswers(db: Kysely<Database>, now: Date, limit: number): Promise<number> {
  const result = await sql`
    delete from idempotency_keys where key_digest in (
      select key_digest from idempotency_keys where expires_at <= ${now} limit ${limit} for update skip locked)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * Keys the fingerprints stored before they were keyed (id null: a bare SHA-256 of the request)
 * under `keyId`: the HMAC of that digest is what a request's fingerprint is now. The number keyed.
 */
export async function keyUnkeyedFingerprints(trx: Kysely<Database>, keyId: string, key: (digest: Buffer) => Buffer): Promise<number> {
  const rows = await trx.selectFrom('idempotency_keys').select(['key_digest', 'fingerprint']).where('fingerprint_key_id', 'is', null).forUpdate().execute();
  for (const row of rows) {
    await trx.updateTable('idempotency_keys').set({ fingerprint: key(row.fingerprint), fingerprint_key_id: keyId }).where('key_digest', '=', row.key_digest).execute();
  }
  return rows.length;
}
