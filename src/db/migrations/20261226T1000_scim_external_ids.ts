// SCIM provisioning (src/scim): the directory's own id of a person (`externalId`,
// RFC 7643 3.1), kept beside the person; looked up by `filter=externalId eq "..."`. Not unique:
// RFC 7643 leaves it to the client, and one person has at most one.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table scim_external_ids (
    user_id uuid primary key references users (id) on delete cascade,
    external_id text not null check (length(external_id) between 1 and 255),
    updated_at timestamptz not null
  )`.execute(db);
  await sql`create index scim_external_ids_external_id on scim_external_ids (external_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table scim_external_ids`.execute(db);
}
