// Second factors (docs/AUTH.md): authenticator apps (TOTP) and passkeys in one table, so that "has a
// second factor" is one index probe in the statements that sign in and authenticate; recovery
// codes as digests; the sign-in challenges between the password and the second factor; how each
// session was opened; and the key that encrypts TOTP keys at rest (a service secret, like the
// cursor-signing key). Passkey columns are here so that both kinds share the constraints.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('second_factors')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('totp', 'passkey')`))
    .addColumn('name', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    // null while a TOTP enrolment waits for its first code: not a second factor yet.
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    // AES-256-GCM under the service secret second_factor_sealing (src/auth/second-factors/totp.ts).
    .addColumn('totp_secret_sealed', 'bytea')
    // The time step of the last code accepted: a code of that step or an earlier one is a replay.
    .addColumn('totp_last_step', 'bigint')
    .addColumn('credential_id', 'text', (c) => c.unique())
    .addColumn('public_key', 'bytea')
    .addColumn('sign_count', 'bigint')
    .addColumn('transports', sql`text[]`)
    .addCheckConstraint('second_factors_totp_shape', sql`(kind = 'totp') = (totp_secret_sealed is not null)`)
    .addCheckConstraint('second_factors_passkey_shape', sql`(kind = 'passkey') = (credential_id is not null and public_key is not null and confirmed_at is not null)`)
    .execute();
  await db.schema.createIndex('second_factors_one_totp').on('second_factors').column('user_id').where(sql.ref('kind'), '=', 'totp').unique().execute();
  await db.schema.createIndex('second_factors_confirmed_idx').on('second_factors').column('user_id').where(sql.ref('confirmed_at'), 'is not', null).execute();

  await db.schema
    .createTable('recovery_codes')
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('digest', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addPrimaryKeyConstraint('recovery_codes_pkey', ['user_id', 'digest'])
    .execute();

  await db.schema
    .createTable('sign_in_challenges')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('token_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('used_at', 'timestamptz')
    .execute();

  await db.schema
    .alterTable('sessions')
    .addColumn('authentication_method', 'text', (c) =>
      c.notNull().defaultTo('password').check(sql`authentication_method in ('password', 'password_totp', 'password_recovery_code', 'password_passkey')`),
    )
    .execute();

  await db.insertInto('service_secrets').values({ name: 'second_factor_sealing', secret: randomBytes(32), created_at: new Date() }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('service_secrets').where('name', '=', 'second_factor_sealing').execute();
  await db.schema.alterTable('sessions').dropColumn('authentication_method').execute();
  await db.schema.dropTable('sign_in_challenges').execute();
  await db.schema.dropTable('recovery_codes').execute();
  await db.schema.dropTable('second_factors').execute();
}
