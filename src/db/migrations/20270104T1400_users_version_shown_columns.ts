// A person's version (what their entity tag, and that of every key or endpoint showing them, is
// made of) moves when what is shown of them changes, not with the columns no representation of a
// User carries: their message language (theirs to change from any page, which must not make an
// administrator's open form of them, or their own open forms, stale) and their known devices.
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_version on users`.execute(db);
  await sql`
    create trigger users_version before update on users
    for each row when ((to_jsonb(old) - 'language' - 'known_devices' - 'known_devices_key_id') is distinct from (to_jsonb(new) - 'language' - 'known_devices' - 'known_devices_key_id'))
    execute function bump_version()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger users_version on users`.execute(db);
  await sql`create trigger users_version before update on users for each row when (old.* is distinct from new.*) execute function bump_version()`.execute(db);
}
