// A person's language for the messages sent to them (docs/MAIL.md, "Security notices"): `en` or
// `fr`, set by the person (PATCH /me; the back office when they pick a language). Null until they
// choose: the messages then follow the language of the last link they were sent, else English.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('language', 'text').execute();
  await sql`alter table users add constraint users_language_check check (language in ('en', 'fr'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').dropConstraint('users_language_check').execute();
  await db.schema.alterTable('users').dropColumn('language').execute();
}
