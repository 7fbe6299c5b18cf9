// API keys and their secrets. A key keeps its metadata; its secrets (the current one, and
// previous ones during a rotation's grace period) are stored as SHA-256 digests only.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('permissions', sql`text[]`, (c) => c.notNull())
    .addColumn('display_prefix', 'text', (c) => c.notNull())
    .addColumn('last_characters', 'text', (c) => c.notNull())
    .addColumn('created_by', 'uuid', (c) => c.references('users.id').onDelete('set null'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addColumn('expires_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('last_used_ip', 'text')
    .execute();
  // Names are unique among keys in use, without regard to case; a revoked key frees its name.
  await sql`create unique index api_keys_name_lower_key on api_keys (lower(name)) where revoked_at is null`.execute(db);
  await db.schema
    .createTable('api_key_secrets')
    .addColumn('digest', 'bytea', (c) => c.primaryKey())
    .addColumn('api_key_id', 'uuid', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    // null: the key's current secret; else the end of a previous secret's grace period.
    .addColumn('retires_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_key_secrets_api_key_id_idx').on('api_key_secrets').column('api_key_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_key_secrets').execute();
  await db.schema.dropTable('api_keys').execute();
}
