// A user-created key is worth at most what its creator holds now (docs/AUTH.md). With
// `on delete set null`, deleting the creator's row would turn the key into an operator key, which
// keeps its whole declared set: a way around that rule. The API never deletes users (it disables
// them); now the database refuses to delete one who created keys, whoever tries.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys drop constraint api_keys_created_by_fkey`.execute(db);
  await sql`alter table api_keys add constraint api_keys_created_by_fkey foreign key (created_by) references users (id) on delete restrict`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table api_keys drop constraint api_keys_created_by_fkey`.execute(db);
  await sql`alter table api_keys add constraint api_keys_created_by_fkey foreign key (created_by) references users (id) on delete set null`.execute(db);
}
