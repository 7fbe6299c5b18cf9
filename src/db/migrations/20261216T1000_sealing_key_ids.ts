// The sealing key leaves the database: TOTP keys are sealed, and recovery-code digests
// keyed, under a key from configuration (src/auth/secrets/sealing-keys.ts), whose id each value now
// carries; and the fingerprints of Idempotency-Key requests are keyed the same way.
// A null id marks a value made before: a TOTP key sealed under the old service secret
// `second_factor_sealing`, a bare SHA-256 digest. SQL cannot reach the configured key, so the
// service re-seals those at its next start (and `backoffice sealing-keys reseal` does the same),
// then deletes the old secret; on a database without any, it goes here.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('second_factors').addColumn('totp_key_id', 'text').execute();
  await db.schema.alterTable('recovery_codes').addColumn('key_id', 'text').execute();
  await db.schema.alterTable('idempotency_keys').addColumn('fingerprint_key_id', 'text').execute();
  await sql`delete from service_secrets where name = 'second_factor_sealing'
    and not exists (select 1 from second_factors where kind = 'totp') and not exists (select 1 from recovery_codes)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_keys').dropColumn('fingerprint_key_id').execute();
  await db.schema.alterTable('recovery_codes').dropColumn('key_id').execute();
  await db.schema.alterTable('second_factors').dropColumn('totp_key_id').execute();
}
