// Step-up at the identity provider (docs/IDENTITY.md, "Step-up at the provider"): a flow may be a
// re-authentication of one session's person instead of a sign-in (`step_up_session_id`; deleted
// with the session), and a session's proof may be of method `oidc`.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table oidc_sign_in_flows add column step_up_session_id uuid references sessions (id) on delete cascade`.execute(db);
  await sql`alter table sessions drop constraint sessions_step_up_method_check`.execute(db);
  await sql`alter table sessions add constraint sessions_step_up_method_check check (step_up_method in ('password', 'totp', 'recovery_code', 'passkey', 'oidc'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions drop constraint sessions_step_up_method_check`.execute(db);
  await sql`alter table sessions add constraint sessions_step_up_method_check check (step_up_method in ('password', 'totp', 'recovery_code', 'passkey'))`.execute(db);
  await sql`alter table oidc_sign_in_flows drop column step_up_session_id`.execute(db);
}
