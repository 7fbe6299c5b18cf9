// Sending the outbox of mail (docs/MAIL.md), and password recovery's links. Typed Kysely<any> so
// the migration stays frozen in time.
//
// - messages: `html` beside the plain text; `attempts`, `next_attempt_at` (retries with backoff),
//   `claim_token` and `claimed_until` (a sender's lease: another process takes a message only once
//   the lease has run out, so a crash between sending and marking resends at most once, after the
//   lease, and never while the first sender may still be at it), `failed_at` (given up), `last_error`
//   (the SMTP server's answer, never the message), `delivered_via` ('smtp' or 'dev_mailbox': the
//   development mailbox "delivers" by marking, so switching to SMTP later does not send the
//   development messages to real addresses), `password_reset_id` (a reset link leaves the outbox
//   once the link is spent, as an invitation's does).
// - password_resets: a recovery link's token is kept as its SHA-256 digest only; `spent_at` is set
//   on use, and for every live link of the person when their password changes in any way (the
//   trigger below: the users table is written by several paths, and none may forget).
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('password_resets')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('token_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en').check(sql`language in ('en', 'fr')`))
    .addColumn('requested_by_user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('spent_at', 'timestamptz')
    .execute();
  await sql`create index password_resets_live_user_idx on password_resets (user_id) where spent_at is null`.execute(db);

  await db.schema
    .alterTable('messages')
    .addColumn('html', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('claim_token', 'uuid')
    .addColumn('claimed_until', 'timestamptz')
    .addColumn('failed_at', 'timestamptz')
    .addColumn('last_error', 'text')
    .addColumn('delivered_via', 'text', (c) => c.check(sql`delivered_via in ('smtp', 'dev_mailbox')`))
    .addColumn('password_reset_id', 'uuid', (c) => c.references('password_resets.id').onDelete('set null'))
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .execute();
  await sql`drop index messages_unsent_idx`.execute(db);
  // What a sender claims: unsent, not given up, by when it is due.
  await sql`create index messages_due_idx on messages (next_attempt_at) where sent_at is null and failed_at is null`.execute(db);
  await sql`create index messages_user_idx on messages (user_id, created_at) where user_id is not null`.execute(db);

  await sql`
    create function password_resets_spent_on_password_change() returns trigger language plpgsql as $$
    begin
      update password_resets set spent_at = now() where user_id = new.id and spent_at is null;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger users_password_change_spends_resets after update of password_hash on users
    for each row when (old.password_hash is distinct from new.password_hash)
    execute function password_resets_spent_on_password_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_password_change_spends_resets on users`.execute(db);
  await sql`drop function password_resets_spent_on_password_change()`.execute(db);
  await sql`drop index messages_user_idx`.execute(db);
  await sql`drop index messages_due_idx`.execute(db);
  for (const column of ['user_id', 'password_reset_id', 'delivered_via', 'last_error', 'failed_at', 'claimed_until', 'claim_token', 'next_attempt_at', 'attempts', 'html']) {
    await db.schema.alterTable('messages').dropColumn(column).execute();
  }
  await sql`create index messages_unsent_idx on messages (created_at) where sent_at is null`.execute(db);
  await db.schema.dropTable('password_resets').execute();
}
