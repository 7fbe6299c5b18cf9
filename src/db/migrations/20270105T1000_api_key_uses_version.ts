// A usage-limited key's count set by a person (PATCH /api-keys/{id}, the command line) is told to
// every process, and tells the uses a process leased before it from those after it
// (src/api-keys/uses.ts, UseSpender):
// - `version` moves with every such set, never with a spend, a refill or a lease given back;
// - a moved version notifies `k:<key id>` on `api_key_changes`, so every process drops its lease of
//   that key (as it drops the key's cached answer) once the set is committed;
// - a lease is given back only to the version it was taken from: a set in between makes it void.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_key_uses').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await sql`create function notify_api_key_uses_set() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_key_changes', 'k:' || new.api_key_id);
      return null;
    end $$`.execute(db);
  await sql`create trigger api_key_uses_set_notify_api_key_change after update on api_key_uses
    for each row when (old.version is distinct from new.version) execute function notify_api_key_uses_set()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists api_key_uses_set_notify_api_key_change on api_key_uses`.execute(db);
  await sql`drop function if exists notify_api_key_uses_set()`.execute(db);
  await db.schema.alterTable('api_key_uses').dropColumn('version').execute();
}
