// Queries on the invitations table and the messages outbox. Functions take the database or a
// transaction, and `now` where an invitation's status is read (a pending invitation past its
// expires_at is `expired`: the time moves, the row does not).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { changedAt } from '../db/versions.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';
import type { InvitationCursor } from './cursor.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../auth/permissions.js';

export type InvitationStatus = 'pending' | 'accepted' | 'revoked' | 'expired';

/** An invitation as the API shows it, times in ISO 8601 (formatted by PostgreSQL), with its creator's name. */
export interface ListedInvitation {
  id: string;
  email: string;
  roles: string[];
  status: InvitationStatus;
  expires_at: string;
  user_id: string | null;
  created_by_type: 'user' | 'api_key';
  created_by_id: string;
  created_by_label: string;
  created_at: string;
  updated_at: string;
  accepted_at: string | null;
  cursor_key: string;
}

/** An invitation as shown, with its revision (what its entity tag is made of). */
export type ShownInvitation = ListedInvitation & { revision: string };

const statusAt = (now: Date) =>
  sql<InvitationStatus>`case when i.status = 'pending' and i.expires_at <= ${now}::timestamptz then 'expired' else i.status end`;

/**
 * The revision: the row's version, its status now (an expiry changes what is shown without a
 * write), the versions of its roles (a renamed role shows its new name) and of its creator.
 */
const revisionAt = (now: Date) => sql<string>`i.version::text || '/' || ${statusAt(now)}
  || '/' || coalesce((select string_agg(r.version::text, ',' order by r.id) from roles r where r.id = any(i.role_ids)), '')
  || '/' || coalesce((select u.version::text from users u where u.id = i.created_by_user_id), (select 'k:' || k.name from api_keys k where k.id = i.created_by_api_key_id), '')`;

function selectListed(db: Kysely<Database>, now: Date) {
  return db
    .selectFrom('invitations as i')
    .select(['i.id', 'i.email', 'i.user_id'])
    .select([
      sql<string[]>`coalesce((select array_agg(r.name order by r.name) from roles r where r.id = any(i.role_ids)), '{}')`.as('roles'),
      statusAt(now).as('status'),
      isoMillis('i.expires_at').as('expires_at'),
      sql<'user' | 'api_key'>`case when i.created_by_user_id is not null then 'user' else 'api_key' end`.as('created_by_type'),
      sql<string>`coalesce(i.created_by_user_id, i.created_by_api_key_id)`.as('created_by_id'),
      sql<string>`coalesce((select u.first_name || ' ' || u.last_name from users u where u.id = i.created_by_user_id), (select k.name from api_keys k where k.id = i.created_by_api_key_id))`.as('created_by_label'),
      isoMillis('i.created_at').as('created_at'),
      isoMillis('i.updated_at').as('updated_at'),
      isoMillis('i.accepted_at').as('accepted_at'),
      isoMicros('i.created_at').as('cursor_key'),
    ]);
}

/** One page, newest first, from the cursor; `limit + 1` rows tell whether more follow. */
export function listInvitationsPage(db: Kysely<Database>, options: { limit: number; after?: InvitationCursor; now: Date }): Promise<ListedInvitation[]> {
  let query = selectListed(db, options.now);
  const after = options.after;
  if (after) query = query.where(sql<boolean>`(i.created_at, i.id) < (${after.key}::timestamptz, ${after.id}::uuid)`);
  return query.orderBy('i.created_at', 'desc').orderBy('i.id', 'desc').limit(options.limit + 1).execute();
}

export function findListedInvitation(db: Kysely<Database>, id: string, now: Date): Promise<ShownInvitation | undefined> {
  return selectListed(db, now).select(revisionAt(now).as('revision')).where('i.id', '=', id).executeTakeFirst();
}

export async function findInvitationRevision(db: Kysely<Database>, id: string, now: Date): Promise<string | undefined> {
  const row = await db.selectFrom('invitations as i').select(revisionAt(now).as('revision')).where('i.id', '=', id).executeTakeFirst();
  return row?.revision;
}

/** What a change reads under the row lock. */
export interface LockedInvitation {
  id: string;
  email: string;
  role_ids: string[];
  language: 'en' | 'fr';
  status: InvitationStatus;
  expires_in_days: number;
  created_by_user_id: string | null;
  created_by_api_key_id: string | null;
}

export function lockInvitation(db: Kysely<Database>, id: string, now: Date): Promise<LockedInvitation | undefined> {
  return db
    .selectFrom('invitations as i')
    .select(['i.id', 'i.email', 'i.role_ids', 'i.language', 'i.expires_in_days', 'i.created_by_user_id', 'i.created_by_api_key_id'])
    .select(statusAt(now).as('status'))
    .where('i.id', '=', id)
    .forUpdate()
    .executeTakeFirst();
}

/** The status of the invitation whose link carries this token's digest (undefined: none). */
export async function findStatusByToken(db: Kysely<Database>, digest: Buffer, now: Date): Promise<InvitationStatus | undefined> {
  const row = await db.selectFrom('invitations as i').select(statusAt(now).as('status')).where('i.token_digest', '=', digest).executeTakeFirst();
  return row?.status;
}

/** The invitation whose link carries this token's digest, its row locked (a token is spent once). */
export function lockInvitationByToken(db: Kysely<Database>, digest: Buffer, now: Date) {
  return db
    .selectFrom('invitations as i')
    .select(['i.id', 'i.email', 'i.role_ids', 'i.language', 'i.expires_in_days', 'i.created_by_user_id', 'i.created_by_api_key_id'])
    .select(statusAt(now).as('status'))
    .where('i.token_digest', '=', digest)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * Serialises the changes that decide whether an address has a live invitation (create, resend,
 * accept) for this address key until the transaction ends.
 */
export async function lockAddress(db: Kysely<Database>, emailKey: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`invitation:${emailKey}`}, 0))`.execute(db);
}

/** True when another invitation than `except` is pending and not expired for this address. */
export async function hasLiveInvitation(db: Kysely<Database>, emailKey: string, now: Date, except?: string): Promise<boolean> {
  let query = db.selectFrom('invitations').select('id').where('email_key', '=', emailKey).where('status', '=', 'pending').where('expires_at', '>', now);
  if (except) query = query.where('id', '<>', except);
  return (await query.executeTakeFirst()) !== undefined;
}

export async function userWithAddressExists(db: Kysely<Database>, emailKey: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('email_key', '=', emailKey).executeTakeFirst()) !== undefined;
}

export async function insertInvitation(
  db: Kysely<Database>,
  v: {
    email: string;
    email_key: string;
    role_ids: string[];
    language: 'en' | 'fr';
    token_digest: Buffer;
    expires_in_days: number;
    expires_at: Date;
    created_by_user_id: string | null;
    created_by_api_key_id: string | null;
    now: Date;
  },
): Promise<string> {
  const { now, ...values } = v;
  const row = await db.insertInto('invitations').values({ ...values, created_at: now, updated_at: now }).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/** A new link: the old token's digest is replaced (the link sent before finds nothing), the expiry starts again. */
export async function replaceToken(db: Kysely<Database>, id: string, digest: Buffer, expiresAt: Date, now: Date): Promise<void> {
  await db.updateTable('invitations').set({ token_digest: digest, expires_at: expiresAt, ...changedAt(now) }).where('id', '=', id).execute();
}

export async function markRevoked(db: Kysely<Database>, id: string, now: Date): Promise<void> {
  await db.updateTable('invitations').set({ status: 'revoked', revoked_at: now, ...changedAt(now) }).where('id', '=', id).execute();
}

export async function markAccepted(db: Kysely<Database>, id: string, userId: string, now: Date): Promise<void> {
  await db.updateTable('invitations').set({ status: 'accepted', user_id: userId, accepted_at: now, ...changedAt(now) }).where('id', '=', id).execute();
}

/** An active person's permissions through their roles now (every permission with the admin role); none when disabled. */
export async function personPermissionsNow(db: Kysely<Database>, userId: string): Promise<Set<string>> {
  const { rows } = await sql<{ permission: string | null; admin: boolean }>`
    select rp.permission, ur.role_id = ${ADMIN_ROLE_ID} as admin
    from users u join user_roles ur on ur.user_id = u.id left join role_permissions rp on rp.role_id = ur.role_id
    where u.id = ${userId} and u.status = 'active'`.execute(db);
  if (rows.some((r) => r.admin)) return new Set(PERMISSIONS);
  return new Set(rows.flatMap((r) => (r.permission ? [r.permission] : [])));
}

/** Whether the key is live (neither revoked nor expired) now. */
export async function keyIsLive(db: Kysely<Database>, keyId: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('api_keys')
    .select('id')
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  return row !== undefined;
}

/** Forgets the links sent for an invitation (spent, revoked or replaced): no token outlives its use in the outbox. */
export async function forgetMessages(db: Kysely<Database>, invitationId: string): Promise<void> {
  await db.deleteFrom('messages').where('invitation_id', '=', invitationId).execute();
}
