// Events: the outbox of what partners hear, the webhook endpoints and their deliveries.
// Typed Kysely<any> so the migration stays frozen in time. docs/EVENTS.md.
//
// - `events` is written by the audit recorder in the change's transaction, beside the audit event
//   it derives from (`audit_event_id`): a rolled back change leaves neither. `payload` is the
//   public body in snake_case (id, type, occurred_at, changed_fields, data), styled per endpoint
//   or request when sent. `required_permission` is what a reader must hold at reading time.
// - `xid` is the writing transaction's id: the feed lists an event only once every transaction
//   that began before it has ended (`xid < pg_snapshot_xmin(pg_current_snapshot())`), so a poller
//   walking `seq` never skips an event whose transaction committed after a later one's.
// - `webhook_deliveries` are made in the same statement as the event, one per subscribed enabled
//   endpoint (until 20270101T1000: since then the delivery workers make them); the id of the
//   delivery is not the webhook-id (the event's id is).
// - An endpoint's secret is sealed (AES-256-GCM, src/webhooks/secrets.ts); `previous_secret_*`
//   hold the rotated-out one during its grace period.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { randomBytes } from 'node:crypto';
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('events')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('seq', 'bigint', (c) => c.notNull().unique().generatedAlwaysAsIdentity())
    .addColumn('xid', sql`xid8`, (c) => c.notNull().defaultTo(sql`pg_current_xact_id()`))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('occurred_at', 'timestamptz', (c) => c.notNull())
    .addColumn('audit_event_id', 'bigint')
    .addColumn('required_permission', 'text', (c) => c.notNull())
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_occurred_at_idx').on('events').column('occurred_at').execute();

  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('url', 'text', (c) => c.notNull().check(sql`char_length(url) <= 2048`))
    .addColumn('description', 'text', (c) => c.check(sql`char_length(description) <= 500`))
    .addColumn('event_types', sql`text[]`, (c) => c.notNull())
    .addColumn('key_style', 'text', (c) => c.notNull().defaultTo('snake').check(sql`key_style in ('snake', 'camel', 'dash', 'pascal')`))
    .addColumn('enabled', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('disabled_reason', 'text', (c) => c.check(sql`disabled_reason in ('failing')`))
    .addColumn('created_by_user_id', 'uuid', (c) => c.references('users.id').onDelete('restrict'))
    .addColumn('created_by_api_key_id', 'uuid', (c) => c.references('api_keys.id').onDelete('restrict'))
    .addColumn('secret_sealed', 'bytea', (c) => c.notNull())
    .addColumn('previous_secret_sealed', 'bytea')
    .addColumn('previous_secret_until', 'timestamptz')
    .addColumn('failing_since', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull())
    .addCheckConstraint('webhook_endpoints_one_owner', sql`num_nonnulls(created_by_user_id, created_by_api_key_id) = 1`)
    .execute();
  await db.schema.createIndex('webhook_endpoints_event_types_idx').on('webhook_endpoints').using('gin').column('event_types').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'uuid', (c) => c.primaryKey().defaultTo(sql`gen_random_uuid()`))
    .addColumn('endpoint_id', 'uuid', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
    .addColumn('event_id', 'uuid', (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending').check(sql`status in ('pending', 'succeeded', 'failed', 'skipped')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'timestamptz')
    .addColumn('last_attempt_at', 'timestamptz')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_duration_ms', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('last_response', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').column('next_attempt_at').where(sql.ref('status'), '=', 'pending').execute();
  await db.schema.createIndex('webhook_deliveries_endpoint_idx').on('webhook_deliveries').columns(['endpoint_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();

  await db.insertInto('service_secrets').values({ name: 'webhook_sealing', secret: randomBytes(32), created_at: new Date() }).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('service_secrets').where('name', '=', 'webhook_sealing').execute();
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.dropTable('webhook_endpoints').execute();
  await db.schema.dropTable('events').execute();
}
