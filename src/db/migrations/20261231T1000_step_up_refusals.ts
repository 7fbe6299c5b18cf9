// Refused step-up answers, counted per session on a key of their own (docs/AUTH.md, "Step-up"): not
// in sign_in_failures, whose per-address count anyone sharing the office's NAT address could fill,
// so that strangers' sign-in failures never block a person's step-up, and a stolen session's
// refusals never block the office's sign-ins. A row per counted refusal; `throttled` marks the one
// refusal past the limit that is recorded in the journal (once per lock window). Deleted with the
// session, and swept after the window.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('step_up_refusals')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('refused_at', 'timestamptz', (c) => c.notNull())
    .addColumn('throttled', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.createIndex('step_up_refusals_session_idx').on('step_up_refusals').columns(['session_id', 'refused_at']).execute();
  await db.schema.createIndex('step_up_refusals_time_idx').on('step_up_refusals').column('refused_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('step_up_refusals').execute();
}
