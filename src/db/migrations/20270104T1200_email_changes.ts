// Changing one's e-mail address (src/email-changes): a pending change keeps the new address and the
// SHA-256 digest of its link's token (the token itself exists only in the message). Typed
// Kysely<any> so the migration stays frozen in time.
//
// - email_changes: one row per request; asking again spends the previous one (`spent_at`); a row
//   is deleted when the person's address changes by any path (the trigger below), so neither a
//   pending link nor the address it names outlives the change, an erasure included.
// - messages.email_change_id: a link's message leaves the outbox with its change (cascade).
// - A person's address changing by any path (their own confirmation, a directory's SCIM update,
//   an erasure) also spends their password recovery links: those were sent to the old address.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('email_changes')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('new_email', 'text', (c) => c.notNull())
    .addColumn('token_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en').check(sql`language in ('en', 'fr')`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('spent_at', 'timestamptz')
    .execute();
  // A person's requests of the last hour (the cap), and the old rows every request sweeps away.
  await sql`create index email_changes_user_idx on email_changes (user_id, created_at)`.execute(db);
  await sql`create index email_changes_created_idx on email_changes (created_at)`.execute(db);

  await db.schema
    .alterTable('messages')
    .addColumn('email_change_id', 'uuid', (c) => c.references('email_changes.id').onDelete('cascade'))
    .execute();
  await sql`create index messages_email_change_idx on messages (email_change_id) where email_change_id is not null`.execute(db);

  await sql`
    create function email_changes_void_on_address_change() returns trigger language plpgsql as $$
    begin
      delete from email_changes where user_id = new.id;
      delete from messages where password_reset_id in (select id from password_resets where user_id = new.id and spent_at is null);
      update password_resets set spent_at = now() where user_id = new.id and spent_at is null;
      return new;
    end $$`.execute(db);
  await sql`
    create trigger users_address_change_voids_links after update of email_key on users
    for each row when (old.email_key is distinct from new.email_key)
    execute function email_changes_void_on_address_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_address_change_voids_links on users`.execute(db);
  await sql`drop function email_changes_void_on_address_change()`.execute(db);
  await db.schema.alterTable('messages').dropColumn('email_change_id').execute();
  await db.schema.dropTable('email_changes').execute();
}
