// Invitations, and the messages the service sends (docs/INVITATIONS.md). Typed Kysely<any> so the
// migration stays frozen in time.
//
// - An invitation's link carries a secret of which only the SHA-256 digest is kept (token_digest);
//   a resend replaces it, so the link sent before finds nothing.
// - status is pending, accepted or revoked; `expired` is a pending invitation past expires_at, said
//   by the reads (the time moves, the row does not).
// - One live invitation per address is checked by the service under an advisory lock on the
//   address's key (a partial unique index cannot say "not expired").
// - messages is the outbox of mail: written in the change's transaction, read by the development
//   mailbox (and, later, an SMTP sender). The link's token is in `body` only.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('invitations')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('email', 'text', (c) => c.notNull().check(sql`char_length(email) between 1 and 254`))
    .addColumn('email_key', 'text', (c) => c.notNull())
    .addColumn('role_ids', sql`uuid[]`, (c) => c.notNull().defaultTo(sql`'{}'::uuid[]`))
    .addColumn('language', 'text', (c) => c.notNull().defaultTo('en').check(sql`language in ('en', 'fr')`))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'accepted', 'revoked')`))
    .addColumn('token_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('expires_in_days', 'integer', (c) => c.notNull().check(sql`expires_in_days between 1 and 30`))
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('restrict'))
    .addColumn('accepted_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('created_by_user_id', 'uuid', (c) => c.references('users.id').onDelete('restrict'))
    .addColumn('created_by_api_key_id', 'uuid', (c) => c.references('api_keys.id').onDelete('restrict'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('version', 'integer', (c) => c.notNull().defaultTo(1))
    .addCheckConstraint('invitations_one_creator', sql`num_nonnulls(created_by_user_id, created_by_api_key_id) = 1`)
    .addCheckConstraint('invitations_accepted_by_someone', sql`(status = 'accepted') = (user_id is not null and accepted_at is not null)`)
    .execute();
  await db.schema.createIndex('invitations_created_at_id_idx').on('invitations').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('invitations_pending_email_key_idx').on('invitations').column('email_key').where(sql.ref('status'), '=', 'pending').execute();

  await db.schema
    .createTable('messages')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('language', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('invitation_id', 'uuid', (c) => c.references('invitations.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('messages_created_at_idx').on('messages').columns(['created_at', 'id']).execute();
  await sql`create index messages_unsent_idx on messages (created_at) where sent_at is null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('messages').execute();
  await db.schema.dropTable('invitations').execute();
}
