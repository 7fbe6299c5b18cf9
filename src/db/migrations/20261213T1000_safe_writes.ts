// Safe writes (docs/SAFE-WRITES.md).
// 1. `version` on users, roles and api_keys: the row's revision, what entity tags are made of
//    (never a hash of a body). A trigger bumps it on every update that changes the row, whoever
//    writes it (the service, the command line, a sign-in stamping last_sign_in_at), so no code
//    path can change a representation and keep its tag.
// 2. `idempotency_keys`: the stored answers of creates made with an `Idempotency-Key`, written in
//    the transaction of the create they guard.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

const VERSIONED = ['users', 'roles', 'api_keys'];

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function bump_version() returns trigger language plpgsql as $$
    begin
      new.version := old.version + 1;
      return new;
    end $$`.execute(db);
  for (const table of VERSIONED) {
    await sql`alter table ${sql.table(table)} add column version integer not null default 1`.execute(db);
    await sql`create trigger ${sql.id(`${table}_version`)} before update on ${sql.table(table)}
      for each row when (old.* is distinct from new.*) execute function bump_version()`.execute(db);
  }

  // key_digest: SHA-256 of (caller, operation, key), so the scope is part of the key itself and
  // the row's size does not depend on the key's length. body: the answer's JSON as sent (text, not
  // jsonb, which would reorder its keys). revision: what the answer's ETag was made of.
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('key_digest', 'bytea', (c) => c.primaryKey())
    .addColumn('fingerprint', 'bytea', (c) => c.notNull())
    .addColumn('status', 'smallint', (c) => c.notNull())
    .addColumn('headers', 'jsonb', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('revision', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').execute();
  for (const table of VERSIONED) {
    await sql`drop trigger ${sql.id(`${table}_version`)} on ${sql.table(table)}`.execute(db);
    await sql`alter table ${sql.table(table)} drop column version`.execute(db);
  }
  await sql`drop function bump_version()`.execute(db);
}
