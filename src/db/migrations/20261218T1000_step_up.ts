// Step-up: a session's latest fresh proof that its person is at the keyboard, for the
// sensitive changes (docs/AUTH.md, "Step-up"). When and by what: a second factor, or the password
// for a person without one. Null until the first proof; signing in makes none.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('sessions')
    .addColumn('stepped_up_at', 'timestamptz')
    .addColumn('step_up_method', 'text', (c) => c.check(sql`step_up_method in ('password', 'totp', 'recovery_code', 'passkey')`))
    .execute();
  await sql`alter table sessions add constraint sessions_step_up_shape check ((stepped_up_at is null) = (step_up_method is null))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('sessions').dropConstraint('sessions_step_up_shape').execute();
  await db.schema.alterTable('sessions').dropColumn('step_up_method').dropColumn('stepped_up_at').execute();
}
