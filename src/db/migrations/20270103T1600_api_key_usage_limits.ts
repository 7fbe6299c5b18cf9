// Usage-limited keys and key metadata (docs/PARTNER-KEYS.md, "Usage limits" and "Metadata").
//
// - `api_key_uses`: one row per usage-limited key (no row: unlimited). `remaining` is spent by one
//   conditional UPDATE per admitted request (src/api-keys/uses.ts), so no two processes can spend
//   the same use: PostgreSQL's row lock orders them and `remaining > 0` is checked on the row as
//   it is after the previous spender's commit. A refill (`refill_interval` 'day' or 'month', the
//   `date_trunc` field of its period in UTC, and `refill_amount`) is applied by that same statement
//   when `refilled_at` lies before the current period's start: the count becomes the amount, once
//   per period, whichever process spends first.
//   A table of its own, not columns of api_keys: spending a use writes a narrow row and fires
//   neither api_keys' version trigger nor its notification trigger on every request.
// - `api_keys.metadata`: a partner's JSON object, returned when the key is read (bounded by the
//   service: 4 KiB serialized, nesting depth 5).
//
// Key cache (migration 20270102T1100_api_key_changes): whether a key is usage-limited is part of
// its cached answer (a limited key spends in the database on every request), so a row of
// api_key_uses inserted or deleted notifies `k:<key id>`; spending and refilling (remaining,
// refilled_at) and the refill's settings change nothing cached and notify nothing. Metadata is not
// cached, but a change of it notifies as any change of api_keys does (20270102T1100's function is
// left as it is, so that the two migrations apply in either order): the key is loaded again once.
//
// Typed Kysely<any> so the migration stays frozen in time.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_key_uses')
    .addColumn('api_key_id', 'uuid', (c) => c.primaryKey().references('api_keys.id').onDelete('cascade'))
    .addColumn('remaining', 'integer', (c) => c.notNull())
    .addColumn('refill_interval', 'text')
    .addColumn('refill_amount', 'integer')
    .addColumn('refilled_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await sql`alter table api_key_uses
    add constraint api_key_uses_remaining_check check (remaining between 0 and 1000000000),
    add constraint api_key_uses_refill_check check (
      (refill_interval is null) = (refill_amount is null)
      and (refill_interval is null or refill_interval in ('day', 'month'))
      and (refill_amount is null or refill_amount between 1 and 1000000000))`.execute(db);

  await db.schema.alterTable('api_keys').addColumn('metadata', 'jsonb').execute();
  await sql`alter table api_keys add constraint api_keys_metadata_check check (metadata is null or jsonb_typeof(metadata) = 'object')`.execute(db);

  // A function of its own, beside 20270102T1100's notify_api_key_change (not a new version of
  // it): either migration may be applied first (migrations merged out of order still apply).
  await sql`create function notify_api_key_uses_change() returns trigger language plpgsql as $$
    begin
      if tg_level = 'STATEMENT' then
        perform pg_notify('api_key_changes', 'all');
        return null;
      end if;
      if tg_op = 'DELETE' or (tg_op = 'UPDATE' and old.api_key_id is distinct from new.api_key_id) then
        perform pg_notify('api_key_changes', 'k:' || old.api_key_id);
      end if;
      if tg_op = 'INSERT' or (tg_op = 'UPDATE' and old.api_key_id is distinct from new.api_key_id) then
        perform pg_notify('api_key_changes', 'k:' || new.api_key_id);
      end if;
      return null;
    end $$`.execute(db);
  await sql`create trigger api_key_uses_notify_api_key_change after insert or delete on api_key_uses for each row execute function notify_api_key_uses_change()`.execute(db);
  // Spending a use updates the row on every request: the trigger is not even called unless the row
  // moves to another key.
  await sql`create trigger api_key_uses_moved_notify_api_key_change after update on api_key_uses
    for each row when (old.api_key_id is distinct from new.api_key_id) execute function notify_api_key_uses_change()`.execute(db);
  await sql`create trigger api_key_uses_truncate_notify_api_key_change after truncate on api_key_uses for each statement execute function notify_api_key_uses_change()`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger if exists api_key_uses_notify_api_key_change on api_key_uses`.execute(db);
  await sql`drop trigger if exists api_key_uses_moved_notify_api_key_change on api_key_uses`.execute(db);
  await sql`drop trigger if exists api_key_uses_truncate_notify_api_key_change on api_key_uses`.execute(db);
  await db.schema.dropTable('api_key_uses').execute();
  await sql`drop function notify_api_key_uses_change()`.execute(db);
  await sql`alter table api_keys drop constraint api_keys_metadata_check, drop column metadata`.execute(db);
}
