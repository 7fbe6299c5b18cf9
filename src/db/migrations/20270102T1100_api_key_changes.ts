// API keys kept in memory (src/api-keys/key-cache.ts, docs/PARTNER-KEYS.md "Keys in memory"): every
// statement that can change a key's answer notifies the channel `api_key_changes` from a trigger,
// so the notification is sent at the change's commit, whichever code (or person at psql) made it.
//
// - `k:<key id>`: the key's row changed (revoked, expiry, permissions, rate limit, allowlist,
//   creator) or was deleted, or one of its secrets was retired or deleted. A use recorded
//   (last_used_at, last_used_ip, and the version and updated_at it moves) changes no answer and
//   sends nothing: every key in use would otherwise be dropped from every process once a minute.
// - `u:<user id>`: the user's status changed, or they were deleted, or a role was given or taken
//   away: every key they created is dropped (what a key may do is bounded by its creator's rights).
// - `n`: a secret was added: the digests remembered as unknown are forgotten.
// - `all`: a role's permissions changed, a role was deleted, or a table was truncated (rare).
//
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create function notify_api_key_change() returns trigger language plpgsql as $$
    begin
      if tg_level = 'STATEMENT' then
        perform pg_notify('api_key_changes', 'all');
        return null;
      end if;
      if tg_table_name = 'api_keys' then
        if tg_op = 'DELETE' then
          perform pg_notify('api_key_changes', 'k:' || old.id);
        elsif (to_jsonb(old) - '{last_used_at,last_used_ip,version,updated_at}'::text[])
              is distinct from (to_jsonb(new) - '{last_used_at,last_used_ip,version,updated_at}'::text[]) then
          perform pg_notify('api_key_changes', 'k:' || new.id);
          if old.id is distinct from new.id then perform pg_notify('api_key_changes', 'k:' || old.id); end if;
        end if;
      elsif tg_table_name = 'api_key_secrets' then
        if tg_op = 'INSERT' then
          perform pg_notify('api_key_changes', 'n');
        else
          perform pg_notify('api_key_changes', 'k:' || old.api_key_id);
          if tg_op = 'UPDATE' then perform pg_notify('api_key_changes', 'k:' || new.api_key_id); end if;
        end if;
      elsif tg_table_name = 'users' then
        if tg_op = 'DELETE' or old.status is distinct from new.status or old.id is distinct from new.id then
          perform pg_notify('api_key_changes', 'u:' || old.id);
        end if;
      elsif tg_table_name = 'user_roles' then
        if tg_op in ('DELETE', 'UPDATE') then perform pg_notify('api_key_changes', 'u:' || old.user_id); end if;
        if tg_op in ('INSERT', 'UPDATE') then perform pg_notify('api_key_changes', 'u:' || new.user_id); end if;
      else
        -- role_permissions, roles: what every key of every holder may do.
        perform pg_notify('api_key_changes', 'all');
      end if;
      return null;
    end $$`.execute(db);

  const row = (table: string, events: string) =>
    sql.raw(`create trigger ${table}_notify_api_key_change after ${events} on ${table} for each row execute function notify_api_key_change()`).execute(db);
  const truncated = (table: string) =>
    sql.raw(`create trigger ${table}_truncate_notify_api_key_change after truncate on ${table} for each statement execute function notify_api_key_change()`).execute(db);

  await row('api_keys', 'update or delete');
  await row('api_key_secrets', 'insert or update or delete');
  await row('users', 'update or delete');
  await row('user_roles', 'insert or update or delete');
  await row('role_permissions', 'insert or update or delete');
  await row('roles', 'delete');
  for (const table of ['api_keys', 'api_key_secrets', 'users', 'user_roles', 'role_permissions', 'roles']) await truncated(table);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['api_keys', 'api_key_secrets', 'users', 'user_roles', 'role_permissions', 'roles']) {
    await sql.raw(`drop trigger if exists ${table}_notify_api_key_change on ${table}`).execute(db);
    await sql.raw(`drop trigger if exists ${table}_truncate_notify_api_key_change on ${table}`).execute(db);
  }
  await sql`drop function notify_api_key_change()`.execute(db);
}
