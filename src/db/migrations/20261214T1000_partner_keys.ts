// Partner-grade keys: a key's own rate limit and IP allowlist, the counters the server processes
// reconcile their local rate-limit decisions through, and each key's use per hour by outcome.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('api_keys')
    // Both or neither: `requests` per `per_seconds`; none means the deployment's default (if any).
    .addColumn('rate_limit_requests', 'integer')
    .addColumn('rate_limit_per_seconds', 'integer')
    // Addresses and CIDR ranges (normalised by src/api-keys/allowed-ips.ts); null: from anywhere.
    .addColumn('allowed_ips', sql`text[]`)
    .execute();
  await sql`alter table api_keys
    add constraint api_keys_rate_limit_check check (
      (rate_limit_requests is null) = (rate_limit_per_seconds is null)
      and (rate_limit_requests is null or rate_limit_requests between 1 and 1000000)
      and (rate_limit_per_seconds is null or rate_limit_per_seconds between 1 and 86400)),
    add constraint api_keys_allowed_ips_check check (allowed_ips is null or cardinality(allowed_ips) between 1 and 100)`.execute(db);

  // One row per limited caller and window: the sum of what every process admitted in it.
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('window_start', 'timestamptz', (c) => c.notNull())
    .addColumn('window_end', 'timestamptz', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_counters_pkey', ['subject', 'window_start'])
    .execute();
  await db.schema.createIndex('rate_limit_counters_window_end_idx').on('rate_limit_counters').column('window_end').execute();

  await db.schema
    .createTable('api_key_usage')
    .addColumn('api_key_id', 'uuid', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('hour', 'timestamptz', (c) => c.notNull())
    .addColumn('allowed', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('ip_refused', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('permission_refused', 'bigint', (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('api_key_usage_pkey', ['api_key_id', 'hour'])
    .execute();
  await db.schema.createIndex('api_key_usage_hour_idx').on('api_key_usage').column('hour').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_key_usage').execute();
  await db.schema.dropTable('rate_limit_counters').execute();
  await sql`alter table api_keys drop constraint api_keys_rate_limit_check, drop constraint api_keys_allowed_ips_check,
    drop column rate_limit_requests, drop column rate_limit_per_seconds, drop column allowed_ips`.execute(db);
}
