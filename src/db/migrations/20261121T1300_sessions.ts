// Sessions and their token sets. Only SHA-256 digests of tokens are stored. A used refresh
// token keeps, sealed with a key only that refresh token derives, the token set it was exchanged
// for: callers inside the grace window get that same set back, and a database leak yields nothing.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('user_id', 'uuid', (c) => c.notNull().references('users.id').onDelete('cascade'))
    .addColumn('ip_address', 'text', (c) => c.notNull())
    .addColumn('user_agent', 'text', (c) => c.notNull())
    .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('last_used_at', 'timestamptz', (c) => c.notNull())
    .addColumn('refreshed_at', 'timestamptz')
    .addColumn('expires_at', 'timestamptz', (c) => c.notNull())
    .addColumn('ended_at', 'timestamptz')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_reason', 'text')
    .execute();
  await db.schema.createIndex('sessions_user_id_idx').on('sessions').columns(['user_id', 'last_used_at']).execute();
  await db.schema
    .createTable('session_tokens')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('session_id', 'uuid', (c) => c.notNull().references('sessions.id').onDelete('cascade'))
    .addColumn('generation', 'integer', (c) => c.notNull())
    .addColumn('access_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('refresh_digest', 'bytea', (c) => c.notNull().unique())
    .addColumn('issued_at', 'timestamptz', (c) => c.notNull())
    .addColumn('used_at', 'timestamptz')
    .addColumn('successor_sealed', 'bytea')
    .addUniqueConstraint('session_tokens_generation_key', ['session_id', 'generation'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('session_tokens').execute();
  await db.schema.dropTable('sessions').execute();
}
