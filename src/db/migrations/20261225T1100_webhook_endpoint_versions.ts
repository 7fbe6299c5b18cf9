// Webhook endpoints get the `version` every changeable resource has (docs/SAFE-WRITES.md): what
// their entity tag is made of, for If-None-Match and If-Match. Bumped by the `bump_version`
// trigger (20261213T1000_safe_writes) on every update that changes the row, as for users, roles
// and API keys, because endpoints are also written outside their service: the delivery worker
// disables one that keeps failing, and the start re-seals secrets.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table webhook_endpoints add column version integer not null default 1`.execute(db);
  await sql`create trigger webhook_endpoints_version before update on webhook_endpoints
    for each row when (old.* is distinct from new.*) execute function bump_version()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger webhook_endpoints_version on webhook_endpoints`.execute(db);
  await sql`alter table webhook_endpoints drop column version`.execute(db);
}
