// A second step after an identity provider keeps what the sign-in would write (the new link of
// issuer and subject, the roles of the groups claim) pending on its challenge, written only when
// the second factor is proved: a subject that never passes it
// does not take the account's link for that issuer, nor set its roles.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sign_in_challenges add column pending_oidc jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sign_in_challenges drop column pending_oidc`.execute(db);
}
