// Queries on password_resets and the messages carrying their links. A link's token is stored as
// its SHA-256 digest only; `spent_at` is set on use and, by the trigger of migration
// 20270103T1400, on every live link of a person whose password changes in any way.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
/** A message as rendered by its template (src/mail/templates.ts). */
interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

/** The account an address names, as a recovery reads it (undefined: none). */
export function findAccount(db: Kysely<Database>, emailKey: string) {
  return db.selectFrom('users').select(['id', 'email', 'status', 'first_name', 'last_name']).where('email_key', '=', emailKey).executeTakeFirst();
}

export function findUser(db: Kysely<Database>, id: string) {
  return db.selectFrom('users').select(['id', 'email', 'status']).where('id', '=', id).executeTakeFirst();
}

/**
 * A request's writes, in one statement whatever the address: the link (when `link` is set) and
 * the message (when `message` is set). An address with no account runs the very same statement,
 * writing nothing: the work of the request does not tell whether an account has the address.
 */
export async function writeRequest(
  db: Kysely<Database>,
  v: {
    userId: string | null;
    link: { digest: Buffer; expiresAt: Date; language: 'en' | 'fr'; requestedBy: string | null } | null;
    message: { recipient: string; kind: string; language: string; rendered: RenderedMessage } | null;
    now: Date;
  },
): Promise<void> {
  const link = v.link;
  const m = v.message;
  await sql`
    with r as (
      insert into password_resets (user_id, token_digest, language, requested_by_user_id, created_at, expires_at)
      select ${v.userId}::uuid, ${link?.digest ?? Buffer.alloc(32)}, ${link?.language ?? 'en'}, ${link?.requestedBy ?? null}::uuid, ${v.now}::timestamptz, ${link?.expiresAt ?? v.now}::timestamptz
      where ${link !== null}
      returning id)
    insert into messages (recipient, kind, language, subject, body, html, user_id, password_reset_id, created_at, next_attempt_at)
    select ${m?.recipient ?? ''}, ${m?.kind ?? ''}, ${m?.language ?? 'en'}, ${m?.rendered.subject ?? ''}, ${m?.rendered.text ?? ''}, ${m?.rendered.html ?? ''},
      ${v.userId}::uuid, (select id from r), ${v.now}::timestamptz, ${v.now}::timestamptz
    where ${m !== null}`.execute(db);
}

/** The live link with this digest (not spent, not expired), if any. */
export function findLiveReset(db: Kysely<Database>, digest: Buffer, now: Date) {
  return db.selectFrom('password_resets').select(['id', 'user_id', 'language']).where('token_digest', '=', digest).where('spent_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
}

/** The same, its row locked until the transaction ends: a link is spent once. Taken after the person's row (lockUser). */
export function lockLiveReset(db: Kysely<Database>, digest: Buffer, now: Date) {
  return db
    .selectFrom('password_resets')
    .select(['id', 'user_id', 'language'])
    .where('token_digest', '=', digest)
    .where('spent_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

/** The person's row locked for the change of their password, with what decides whether they may: before their link (lockLiveReset). */
export function lockUser(db: Kysely<Database>, userId: string) {
  return db.selectFrom('users').select(['id', 'email', 'status']).where('id', '=', userId).forUpdate().executeTakeFirst();
}

/** Spends every live link of the person, and takes their messages out of the outbox (a spent link is nobody's to read). */
export async function spendAll(db: Kysely<Database>, userId: string, now: Date): Promise<void> {
  await db.updateTable('password_resets').set({ spent_at: now }).where('user_id', '=', userId).where('spent_at', 'is', null).execute();
  await sql`delete from messages where password_reset_id in (select id from password_resets where user_id = ${userId})`.execute(db);
}
