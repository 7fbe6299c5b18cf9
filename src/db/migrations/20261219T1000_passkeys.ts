// Passkeys (WebAuthn). The credential lives in second_factors beside the authenticator
// app (kind 'passkey', columns of migration 20261215T1000), so "has a second factor" stays one
// probe; this adds what the checks need: the backup flags the authenticator reported (eligible is
// fixed at creation, the state may change). The WebAuthn challenges are kept here, not in a
// process, so that any process may finish what another started: a person's registration and a
// passwordless sign-in in passkey_challenges, the passkey's challenge of a second step beside that
// sign-in's own challenge (sign_in_challenges.passkey_challenge). A session opened by a passkey
// alone is 'passkey'.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('second_factors')
    .addColumn('backup_eligible', 'boolean')
    .addColumn('backup_state', 'boolean')
    .execute();
  await db.schema
    .alterTable('second_factors')
    .addCheckConstraint(
      'second_factors_passkey_fields',
      sql`kind <> 'passkey' or (name is not null and length(name) between 1 and 64 and sign_count is not null and sign_count >= 0 and backup_eligible is not null and backup_state is not null and (backup_eligible or not backup_state))`,
    )
    .execute();

  await db.schema
    .createTable('passkey_challenges')
    // base64url of 32 random bytes: the value the authenticator signs, found again in its answer.
    .addColumn('challenge', 'text', (c) => c.primaryKey())
    .addColumn('purpose', 'text', (c) => c.notNull().check(sql`purpose in ('registration', 'sign_in')`))
    // The person registering; null for a passwordless sign-in (the credential names its person).
    .addColumn('user_id', 'uuid', (c) => c.references('users.id').onDelete('cascade'))
    // The client's address as the sign-in throttle counts it: live challenges per address are capped.
    .addColumn('counted_address', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('passkey_challenges_registration_has_user', sql`(purpose = 'registration') = (user_id is not null)`)
    .execute();
  await db.schema.createIndex('passkey_challenges_address_idx').on('passkey_challenges').columns(['counted_address', 'expires_at']).execute();
  await db.schema.createIndex('passkey_challenges_expiry_idx').on('passkey_challenges').column('expires_at').execute();

  await db.schema.alterTable('sign_in_challenges').addColumn('passkey_challenge', 'text').execute();

  await sql`alter table sessions drop constraint sessions_authentication_method_check`.execute(db);
  await sql`alter table sessions add constraint sessions_authentication_method_check
    check (authentication_method in ('password', 'password_totp', 'password_recovery_code', 'password_passkey', 'passkey'))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sessions drop constraint sessions_authentication_method_check`.execute(db);
  await sql`delete from sessions where authentication_method = 'passkey'`.execute(db);
  await sql`alter table sessions add constraint sessions_authentication_method_check
    check (authentication_method in ('password', 'password_totp', 'password_recovery_code', 'password_passkey'))`.execute(db);
  await db.schema.alterTable('sign_in_challenges').dropColumn('passkey_challenge').execute();
  await db.schema.dropTable('passkey_challenges').execute();
  await db.schema.alterTable('second_factors').dropConstraint('second_factors_passkey_fields').execute();
  await db.schema.alterTable('second_factors').dropColumn('backup_state').dropColumn('backup_eligible').execute();
}
