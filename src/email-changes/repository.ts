// Queries on email_changes and the messages carrying their links. A link's token is stored as its
// SHA-256 digest only; rows are spent when replaced or used, and deleted with the address change
// that ends them (the trigger of migration 20270104T1200).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';

/** A message as rendered (src/email-changes/messages.ts). */
interface RenderedMessage {
  subject: string;
  text: string;
  html: string;
}

/** How long old rows (spent, expired, replaced) are kept before a request sweeps them away. */
const KEPT_FOR = '2 days';

/** The person as a change reads them, their row locked until the transaction ends. */
export function lockPerson(db: Kysely<Database>, userId: string) {
  return db.selectFrom('users').select(['id', 'email', 'email_key', 'status']).where('id', '=', userId).forUpdate().executeTakeFirst();
}

/**
 * How many changes the person asked for since `since`, counted in the journal
 * (`email_change_requested`): the person's rows of email_changes are deleted with any change of
 * their address, so counting those would let a person who confirms a change to a mailbox of
 * their own now and then ask again without end.
 */
export async function countRequestedSince(db: Kysely<Database>, userId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('security_events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('type', '=', 'email_change_requested')
    .where('occurred_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A request's writes: every earlier pending change of the person spent, old rows of anyone swept
 * away, the new change and the message carrying its link.
 */
export async function writeRequest(
  db: Kysely<Database>,
  v: { userId: string; newEmail: string; digest: Buffer; language: 'en' | 'fr'; expiresAt: Date; message: { recipient: string; rendered: RenderedMessage }; now: Date },
): Promise<void> {
  await db.updateTable('email_changes').set({ spent_at: v.now }).where('user_id', '=', v.userId).where('spent_at', 'is', null).execute();
  await sql`delete from email_changes where created_at < ${v.now}::timestamptz - ${KEPT_FOR}::interval`.execute(db);
  await sql`
    with c as (
      insert into email_changes (user_id, new_email, token_digest, language, created_at, expires_at)
      values (${v.userId}::uuid, ${v.newEmail}, ${v.digest}, ${v.language}, ${v.now}::timestamptz, ${v.expiresAt}::timestamptz)
      returning id)
    insert into messages (recipient, kind, language, subject, body, html, user_id, email_change_id, created_at, next_attempt_at)
    select ${v.message.recipient}, 'email_change', ${v.language}, ${v.message.rendered.subject}, ${v.message.rendered.text}, ${v.message.rendered.html},
      ${v.userId}::uuid, c.id, ${v.now}::timestamptz, ${v.now}::timestamptz
    from c`.execute(db);
}

/** The live change with this digest (not spent, not expired), locked until the transaction ends: a link is used once. */
export function lockLiveChange(db: Kysely<Database>, digest: Buffer, now: Date) {
  return db
    .selectFrom('email_changes')
    .select(['id', 'user_id', 'new_email', 'language'])
    .where('token_digest', '=', digest)
    .where('spent_at', 'is', null)
    .where('expires_at', '>', now)
    .forUpdate()
    .executeTakeFirst();
}

/** Whether another account has the address (compared by its key, as sign-in compares it). */
export async function isTaken(db: Kysely<Database>, emailKey: string, exceptUserId: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('email_key', '=', emailKey).where('id', '!=', exceptUserId).executeTakeFirst()) !== undefined;
}

/** The new address set; the trigger then deletes every change of the person and spends their recovery links. */
export async function setAddress(db: Kysely<Database>, userId: string, email: string, emailKey: string, now: Date): Promise<void> {
  await db.updateTable('users').set({ email, email_key: emailKey, updated_at: now }).where('id', '=', userId).execute();
}
