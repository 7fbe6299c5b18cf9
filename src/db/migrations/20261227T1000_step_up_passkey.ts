// A passkey as a step-up proof (docs/AUTH.md, "Step-up"): its WebAuthn challenge is kept
// in passkey_challenges with the purpose 'step_up', bound to the person and to the session that
// asked for it, so that an answer is good once and only on that session. A session's end takes its
// challenges with it.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('passkey_challenges').addColumn('session_id', 'uuid', (c) => c.references('sessions.id').onDelete('cascade')).execute();
  await sql`alter table passkey_challenges drop constraint passkey_challenges_purpose_check`.execute(db);
  await sql`alter table passkey_challenges add constraint passkey_challenges_purpose_check check (purpose in ('registration', 'sign_in', 'step_up'))`.execute(db);
  await sql`alter table passkey_challenges drop constraint passkey_challenges_registration_has_user`.execute(db);
  // Only a passwordless sign-in's challenge belongs to nobody yet; only a step-up's to a session.
  await sql`alter table passkey_challenges add constraint passkey_challenges_person check ((purpose = 'sign_in') = (user_id is null))`.execute(db);
  await sql`alter table passkey_challenges add constraint passkey_challenges_session check ((purpose = 'step_up') = (session_id is not null))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from passkey_challenges where purpose = 'step_up'`.execute(db);
  await sql`alter table passkey_challenges drop constraint passkey_challenges_session`.execute(db);
  await sql`alter table passkey_challenges drop constraint passkey_challenges_person`.execute(db);
  await sql`alter table passkey_challenges add constraint passkey_challenges_registration_has_user check ((purpose = 'registration') = (user_id is not null))`.execute(db);
  await sql`alter table passkey_challenges drop constraint passkey_challenges_purpose_check`.execute(db);
  await sql`alter table passkey_challenges add constraint passkey_challenges_purpose_check check (purpose in ('registration', 'sign_in'))`.execute(db);
  await db.schema.alterTable('passkey_challenges').dropColumn('session_id').execute();
}
