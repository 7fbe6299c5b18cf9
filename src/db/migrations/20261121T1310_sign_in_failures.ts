// Failed sign-in attempts, one row each, shared by every server process. The e-mail is kept as a
// SHA-256 digest of its lower-case form: attempts on unknown addresses count without storing them.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sign_in_failures')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('email_digest', 'bytea', (c) => c.notNull())
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('failed_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sign_in_failures_email_idx').on('sign_in_failures').columns(['email_digest', 'failed_at']).execute();
  await db.schema.createIndex('sign_in_failures_ip_idx').on('sign_in_failures').columns(['ip_address', 'failed_at']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('sign_in_failures').execute();
}
