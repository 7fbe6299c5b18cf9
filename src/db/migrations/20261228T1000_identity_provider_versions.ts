// Identity providers get the `version` every changeable resource has (docs/SAFE-WRITES.md): what
// their entity tag is made of, for If-None-Match and If-Match. Moved by their service's own change
// (`changedAt`, src/db/versions.ts), as tasks' and roles' are, not by a trigger: the only write
// outside the service is the start's re-sealing of the client secret, which the representation does
// not show (a trigger would move the tag for nothing). Their list's order (name_key, id) is served
// by the unique index on name_key.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table identity_providers add column version integer not null default 1`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table identity_providers drop column version`.execute(db);
}
