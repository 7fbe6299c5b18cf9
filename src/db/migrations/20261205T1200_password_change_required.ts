// A password set by someone else (the generated first administrator's, one given in POST /users)
// is known to two people: its owner must replace it at first sign-in. Until then the user's access
// tokens allow only changing the password (and signing out).
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('must_change_password', 'boolean', (c) => c.notNull().defaultTo(false)).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropColumn('must_change_password').execute();
}
