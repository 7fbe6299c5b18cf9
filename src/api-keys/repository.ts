// Queries on API keys and their secret digests. Functions take the database or a transaction.
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../db/schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** What authentication needs, found by the digest of the presented secret in one query. */
export interface KeyBySecret {
  id: string;
  permissions: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The end of the grace period when this is a previous secret; null for the current one. */
  retires_at: Date | null;
}

export function findKeyBySecretDigest(db: Kysely<Database>, digest: Buffer): Promise<KeyBySecret | undefined> {
  return db
    .selectFrom('api_key_secrets as s')
    .innerJoin('api_keys as k', 'k.id', 's.api_key_id')
    .select(['k.id', 'k.permissions', 'k.expires_at', 'k.revoked_at', 'k.last_used_at', 's.retires_at'])
    .where('s.digest', '=', digest)
    .executeTakeFirst();
}

/** Records a use unless one was recorded less than `interval` ago, checked by the database so that concurrent requests write once; true when written. */
export async function recordKeyUse(db: Kysely<Database>, id: string, use: { at: Date; ip: string; intervalMs: number }): Promise<boolean> {
  const threshold = new Date(use.at.getTime() - use.intervalMs);
  const result = await db
    .updateTable('api_keys')
    .set({ last_used_at: use.at, last_used_ip: use.ip })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<=', threshold)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export function listKeys(db: Kysely<Database>, filter: { expiringBefore?: Date } = {}): Promise<ApiKeyRow[]> {
  let query = db.selectFrom('api_keys').selectAll();
  if (filter.expiringBefore) {
    query = query.where('revoked_at', 'is', null).where('expires_at', 'is not', null).where('expires_at', '<=', filter.expiringBefore);
  }
  return query.orderBy('created_at').orderBy('id').execute();
}

export function findKeyById(db: Kysely<Database>, id: string, forUpdate = false): Promise<ApiKeyRow | undefined> {
  const query = db.selectFrom('api_keys').selectAll().where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export interface NewKey {
  name: string;
  permissions: string[];
  display_prefix: string;
  last_characters: string;
  created_by: string | null;
  expires_at: Date | null;
  now: Date;
}

export async function insertKey(db: Kysely<Database>, key: NewKey): Promise<string> {
  const { now, ...values } = key;
  const row = await db
    .insertInto('api_keys')
    .values({ ...values, created_at: now, updated_at: now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function insertSecret(db: Kysely<Database>, apiKeyId: string, digest: Buffer, now: Date): Promise<void> {
  await db.insertInto('api_key_secrets').values({ digest, api_key_id: apiKeyId, created_at: now, retires_at: null }).execute();
}

/** Retires the current secret at `at` (deleted when that is now: no grace period). */
export async function retireCurrentSecret(db: Kysely<Database>, apiKeyId: string, at: Date, now: Date): Promise<void> {
  if (at.getTime() <= now.getTime()) {
    await db.deleteFrom('api_key_secrets').where('api_key_id', '=', apiKeyId).where('retires_at', 'is', null).execute();
  } else {
    await db.updateTable('api_key_secrets').set({ retires_at: at }).where('api_key_id', '=', apiKeyId).where('retires_at', 'is', null).execute();
  }
}

export async function updateKey(
  db: Kysely<Database>,
  id: string,
  fields: Partial<Pick<ApiKeyRow, 'name' | 'permissions' | 'expires_at' | 'display_prefix' | 'last_characters' | 'revoked_at'>> & { now: Date },
): Promise<void> {
  const { now, ...rest } = fields;
  await db.updateTable('api_keys').set({ ...rest, updated_at: now }).where('id', '=', id).execute();
}
