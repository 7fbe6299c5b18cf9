// Secrets the service keeps for itself, one row each, created here at first start so that every
// process reads the same one: `cursor_signing` keys the HMAC of pagination cursors. Replacing a
// row (`backoffice rotate-cursor-key`) invalidates what it signed, and nothing else.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('service_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('secret', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.insertInto('service_secrets').values({ name: 'cursor_signing', secret: randomBytes(32), created_at: new Date() }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('service_secrets').execute();
}
