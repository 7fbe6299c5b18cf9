// The daily cap on second-factor code failures (docs/AUTH.md, "The daily cap on wrong
// codes"): every wrong authenticator-app code of a person, at sign-in or at a step-up, is one row
// here, counted over the last 24 hours inside the checking transaction (with the person's TOTP row
// locked), so that every process counts the same failures. Rows past their day are swept; a reset
// of the person's second factors deletes theirs.
/* eslint-disable @typescript-eslint/no-explicit-any */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('second_factor_code_failures')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('failed_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('second_factor_code_failures_user_idx').on('second_factor_code_failures').columns(['user_id', 'failed_at']).execute();
  await db.schema.createIndex('second_factor_code_failures_time_idx').on('second_factor_code_failures').column('failed_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('second_factor_code_failures').execute();
}
