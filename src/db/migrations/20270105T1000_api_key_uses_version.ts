// A usage-limited key's count or refill changed by a person (PATCH /api-keys/{id}, the command
// line) is told to every process, and tells the uses a process leased before it from those after
// it (src/api-keys/uses.ts, UseSpender):
// - `version` is drawn from a sequence at every set of the count (and at a row's creation): never
//   by a spend, a refill or a lease given back, and never the same twice, even for a key whose
//   limit was removed and added again;
// - a moved version, or a changed refill, notifies `k:<key id>` on `api_key_changes`, so every
//   process drops its lease of that key (as it drops the key's cached answer) once it is committed;
// - a lease is given back only to the version (and `refilled_at`) it was taken from: a set in
//   between makes it void.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create sequence api_key_uses_versions`.execute(db);
  await sql`alter table api_key_uses add column version bigint not null default nextval('api_key_uses_versions')`.execute(db);
  await sql`create function notify_api_key_uses_set() returns trigger language plpgsql as $$
    begin
      perform pg_notify('api_key_changes', 'k:' || new.api_key_id);
      return null;
    end $$`.execute(db);
  await sql`create trigger api_key_uses_set_notify_api_key_change after update on api_key_uses
    for each row when (old.version is distinct from new.version
      or old.refill_interval is distinct from new.refill_interval or old.refill_amount is distinct from new.refill_amount)
    execute function notify_api_key_uses_set()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists api_key_uses_set_notify_api_key_change on api_key_uses`.execute(db);
  await sql`drop function if exists notify_api_key_uses_set()`.execute(db);
  await db.schema.alterTable('api_key_uses').dropColumn('version').execute();
  await sql`drop sequence if exists api_key_uses_versions`.execute(db);
}
