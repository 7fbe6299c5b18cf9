// Queries on API keys and their secret digests. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../db/schema.js';
import { ADMIN_ROLE_ID } from '../auth/permissions.js';
import { fixedStatement } from '../db/fixed-statement.js';
import { refillDueAt, usesAvailableAt } from './uses.js';
import { uniqueNameKey } from '../text/normalize.js';
import { userRevision } from '../revisions/revisions.js';

/** The key's own row, as stored. */
export type ApiKeyRecord = Selectable<ApiKeysTable>;

/** A key as it is shown: its row, what it may do now, and its creator. */
export type ApiKeyRow = ApiKeyRecord & {
  effective_permissions: string[];
  /** The key's uses as stored (api_key_uses; all null: not usage-limited); uses.ts reads them as of now. */
  uses_remaining: number | null;
  uses_refill_interval: 'day' | 'month' | null;
  uses_refill_amount: number | null;
  uses_refilled_at: Date | null;
  creator_email: string | null;
  creator_first_name: string | null;
  creator_last_name: string | null;
  creator_status: 'active' | 'disabled' | null;
};

/**
 * A key is never worth more than its creator now: its declared permissions that the creator (the
 * users row `c`, joined on k.created_by) still holds, in the key's order; all of them when the
 * creator holds the admin role or for an operator's key (no creator); none when the creator is
 * disabled. Part of the statement that reads the key, so it costs no extra round trip.
 */
const effectivePermissions = sql<string[]>`case
  when k.created_by is null then k.permissions
  when c.status <> 'active' then '{}'::text[]
  when exists (
    select 1 from user_roles ur where ur.user_id = k.created_by and ur.role_id = ${sql.lit(ADMIN_ROLE_ID)}
  ) then k.permissions
  else array(
    select p from unnest(k.permissions) with ordinality as kp(p, n)
    where exists (
      select 1 from user_roles ur join role_permissions rp on rp.role_id = ur.role_id
      where ur.user_id = k.created_by and rp.permission = kp.p
    )
    order by kp.n
  )
end`;

/** Who created the key (null: an operator's key; undefined: no such key). */
export async function creatorOfKey(db: Kysely<Database>, id: string): Promise<string | null | undefined> {
  return (await db.selectFrom('api_keys').select('created_by').where('id', '=', id).executeTakeFirst())?.created_by;
}

/**
 * What the key may do now (effectivePermissions): read again inside a long request's transaction,
 * after its creator's row and roles are locked FOR SHARE, it holds until the transaction ends.
 */
export async function keyPermissionsNow(db: Kysely<Database>, id: string): Promise<string[]> {
  const row = await db.selectFrom('api_keys as k').leftJoin('users as c', 'c.id', 'k.created_by').select(effectivePermissions.as('permissions')).where('k.id', '=', id).executeTakeFirst();
  return row?.permissions ?? [];
}

/** What authentication needs, found by the digest of the presented secret in one query. */
export interface KeyBySecret {
  id: string;
  /** Who created the key (null: an operator's key): a change of their rights drops the key from memory (key-cache.ts). */
  created_by: string | null;
  /** key.permissions ∩ the creator's current permissions (see effectivePermissions). */
  permissions: string[];
  /** The creator's status; null for an operator's key. */
  creator_status: 'active' | 'disabled' | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The end of the grace period when this is a previous secret; null for the current one. */
  retires_at: Date | null;
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
  allowed_ips: string[] | null;
  /** Whether the key carries a count of remaining uses: then each admitted request spends one in the database (uses.ts). */
  usage_limited: boolean;
}

/** The columns of KeyBySecret, from the secret `s`, its key `k` and the key's creator `c`. */
function keyAnswer(db: Kysely<Database>) {
  return db
    .selectFrom('api_key_secrets as s')
    .innerJoin('api_keys as k', 'k.id', 's.api_key_id')
    .leftJoin('users as c', 'c.id', 'k.created_by')
    .select([
      'k.id',
      'k.created_by',
      effectivePermissions.as('permissions'),
      'c.status as creator_status',
      'k.expires_at',
      'k.revoked_at',
      'k.last_used_at',
      's.retires_at',
      'k.rate_limit_requests',
      'k.rate_limit_per_seconds',
      'k.allowed_ips',
      sql<boolean>`exists (select 1 from api_key_uses u where u.api_key_id = k.id)`.as('usage_limited'),
    ]);
}

/** Run on every request made with an API key: compiled once (bench/ runs the same text). */
export const keyBySecretDigest = fixedStatement((db, p: { digest: Buffer }) => keyAnswer(db).where('s.digest', '=', p.digest));

/**
 * The answers of the keys in force used since `since`, most recently used first, at most `limit`
 * secrets, each with its digest: what a process loads into its key cache before it answers
 * (key-cache.ts, preload). The same answer, column for column, as keyBySecretDigest gives per digest.
 */
export function keysUsedSince(db: Kysely<Database>, since: Date, now: Date, limit: number): Promise<(KeyBySecret & { digest: Buffer })[]> {
  return keyAnswer(db)
    .select('s.digest')
    .where('k.revoked_at', 'is', null)
    .where('k.last_used_at', '>=', since)
    .where((eb) => eb.or([eb('s.retires_at', 'is', null), eb('s.retires_at', '>', now)]))
    .orderBy('k.last_used_at', 'desc')
    .orderBy('s.digest')
    .limit(limit)
    .execute();
}

export async function findKeyBySecretDigest(db: Kysely<Database>, digest: Buffer): Promise<KeyBySecret | undefined> {
  return (await keyBySecretDigest.execute(db, { digest }))[0];
}

/** A key's remaining uses as shown at `now` (`u`: its api_key_uses row, null when the key has none): with a refill due since the last request applied. */
const usesRemainingAt = (now: Date) => sql<number | null>`${usesAvailableAt(now)}`;

/** A key as shown at `now`: its remaining uses with a refill due since the last request applied (as uses.ts would at the next one). */
function selectShown(db: Kysely<Database>, now: Date) {
  return db
    .selectFrom('api_keys as k')
    .leftJoin('users as c', 'c.id', 'k.created_by')
    .leftJoin('api_key_uses as u', 'u.api_key_id', 'k.id')
    .selectAll('k')
    .select([
      effectivePermissions.as('effective_permissions'),
      usesRemainingAt(now).as('uses_remaining'),
      'u.refill_interval as uses_refill_interval',
      'u.refill_amount as uses_refill_amount',
      'u.refilled_at as uses_refilled_at',
      'c.email as creator_email',
      'c.first_name as creator_first_name',
      'c.last_name as creator_last_name',
      'c.status as creator_status',
    ]);
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

export function listKeys(db: Kysely<Database>, now: Date, filter: { expiringBefore?: Date } = {}): Promise<ApiKeyRow[]> {
  let query = selectShown(db, now);
  if (filter.expiringBefore) {
    query = query.where('k.revoked_at', 'is', null).where('k.expires_at', 'is not', null).where('k.expires_at', '<=', filter.expiringBefore);
  }
  return query.orderBy('k.created_at').orderBy('k.id').execute();
}

/**
 * An API key (the api_keys row `k`, its creator left-joined as `c`, its uses as `u`): its version
 * (a use recorded bumps it too, as `last_used_at` is shown), its creator's revision, for the key
 * shows its creator and what the creator's roles still let it do (`effective_permissions`), and
 * its remaining uses as shown: a use spends one without writing the key's row, and a read sent
 * back after uses were spent must not pass its If-Match and give them back.
 */
const apiKeyRevisionAt = (now: Date) => sql<string>`k.version::text || '/' || coalesce(${userRevision('c')}, '') || '/' || coalesce(${usesRemainingAt(now)}::text, '-')`;

/** A key as shown, with its revision (what its entity tag is made of). */
export type ShownApiKey = ApiKeyRow & { revision: string };

export function findKeyById(db: Kysely<Database>, id: string, now: Date): Promise<ShownApiKey | undefined> {
  return selectShown(db, now).select(apiKeyRevisionAt(now).as('revision')).where('k.id', '=', id).executeTakeFirst();
}

/** The key's current revision at `now` (read under the lock of a change, to check its If-Match). */
export async function findKeyRevision(db: Kysely<Database>, id: string, now: Date): Promise<string | undefined> {
  const row = await db
    .selectFrom('api_keys as k')
    .leftJoin('users as c', 'c.id', 'k.created_by')
    .leftJoin('api_key_uses as u', 'u.api_key_id', 'k.id')
    .select(apiKeyRevisionAt(now).as('revision'))
    .where('k.id', '=', id)
    .executeTakeFirst();
  return row?.revision;
}

/** The key's row, locked until the transaction ends: changes of one key run one after the other. */
export function lockKey(db: Kysely<Database>, id: string): Promise<ApiKeyRecord | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface NewKey {
  name: string;
  permissions: string[];
  display_prefix: string;
  last_characters: string;
  created_by: string | null;
  expires_at: Date | null;
  rate_limit_requests: number | null;
  rate_limit_per_seconds: number | null;
  allowed_ips: string[] | null;
  metadata: Record<string, unknown> | null;
  now: Date;
}

export async function insertKey(db: Kysely<Database>, key: NewKey): Promise<string> {
  const { now, metadata, ...values } = key;
  const row = await db
    .insertInto('api_keys')
    .values({ ...values, metadata: metadata === null ? null : JSON.stringify(metadata), name_key: uniqueNameKey(values.name), created_at: now, updated_at: now })
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
  fields: Partial<
    Pick<
      ApiKeyRecord,
      'name' | 'permissions' | 'expires_at' | 'display_prefix' | 'last_characters' | 'revoked_at' | 'created_by' | 'rate_limit_requests' | 'rate_limit_per_seconds' | 'allowed_ips'
    >
  > & { now: Date; metadata?: Record<string, unknown> | null },
): Promise<void> {
  const { now, metadata, ...rest } = fields;
  const key = rest.name === undefined ? {} : { name_key: uniqueNameKey(rest.name) };
  const meta = metadata === undefined ? {} : { metadata: metadata === null ? null : JSON.stringify(metadata) };
  await db.updateTable('api_keys').set({ ...rest, ...key, ...meta, updated_at: now }).where('id', '=', id).execute();
}

/** A key's uses as stored, locked with the key's row (a change reads them under the key's lock). */
export function lockKeyUses(db: Kysely<Database>, id: string) {
  return db.selectFrom('api_key_uses').selectAll().where('api_key_id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Sets a key's uses: `null` removes the limit (the key becomes unlimited); otherwise the count is
 * set as of `now` (the next refill, if any, at the next period's start).
 */
export async function setKeyUses(
  db: Kysely<Database>,
  id: string,
  uses: { remaining: number; refill_interval: 'day' | 'month' | null; refill_amount: number | null } | null,
  now: Date,
): Promise<void> {
  if (uses === null) {
    await db.deleteFrom('api_key_uses').where('api_key_id', '=', id).execute();
    return;
  }
  const row = { api_key_id: id, ...uses, refilled_at: now };
  await db
    .insertInto('api_key_uses')
    .values(row)
    // A new version: every process drops its lease of this key, and a lease taken before cannot be given back into the new count (uses.ts).
    .onConflict((oc) => oc.column('api_key_id').doUpdateSet({ remaining: uses.remaining, refill_interval: uses.refill_interval, refill_amount: uses.refill_amount, refilled_at: now, version: sql`nextval('api_key_uses_versions')` }))
    .execute();
}

/**
 * Changes a limited key's refill alone: its count stays, with its version, so that the uses
 * processes leased are given back to it (uses.ts; the change notifies the key, which drops the
 * leases). A refill due under the old settings is applied first, as the next spend would have.
 */
export async function setKeyRefill(db: Kysely<Database>, id: string, refill: { refill_interval: 'day' | 'month' | null; refill_amount: number | null }, now: Date): Promise<void> {
  await db
    .updateTable('api_key_uses as u')
    .set({
      remaining: usesAvailableAt(now),
      refilled_at: sql`case when ${refillDueAt(now)} then ${now}::timestamptz else u.refilled_at end`,
      refill_interval: refill.refill_interval,
      refill_amount: refill.refill_amount,
    })
    .where('api_key_id', '=', id)
    .execute();
}
