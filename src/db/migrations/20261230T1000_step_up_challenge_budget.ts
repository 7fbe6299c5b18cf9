// Step-up challenges have a budget of their own, per session (docs/AUTH.md, "Step-up"): counted by
// their session, so an index on it. It also serves the cascade when a session row is deleted.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index passkey_challenges_step_up_session_idx on passkey_challenges (session_id, expires_at) where session_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index passkey_challenges_step_up_session_idx`.execute(db);
}
