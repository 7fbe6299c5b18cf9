// Webhook signing secrets leave the key kept beside them (as TOTP keys did, 20261216T1000):
// they are sealed under the configured sealing keys (src/auth/secrets/sealing-keys.ts), whose id each
// sealed secret now carries (`secret_key_id`, `previous_secret_key_id`). A null id marks a secret
// sealed before, under the service secret `webhook_sealing` that the database kept. SQL cannot
// reach the configured key, so the service re-seals those at its next start (and `backoffice
// sealing-keys reseal` does the same), then deletes that secret; on a database without any
// endpoint, it goes here.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('secret_key_id', 'text').addColumn('previous_secret_key_id', 'text').execute();
  await sql`delete from service_secrets where name = 'webhook_sealing' and not exists (select 1 from webhook_endpoints)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('previous_secret_key_id').dropColumn('secret_key_id').execute();
}
