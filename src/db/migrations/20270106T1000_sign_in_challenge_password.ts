// The second step of a password sign-in opens its session only if the person's password is still
// the one the first step verified (src/auth/sessions/sign-in.ts): the challenge keeps the SHA-256
// digest of the hash verified (never the hash itself), compared with the stored hash's digest by
// the statement that opens the session. Null for a challenge after an identity provider.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sign_in_challenges add column password_digest bytea`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sign_in_challenges drop column password_digest`.execute(db);
}
