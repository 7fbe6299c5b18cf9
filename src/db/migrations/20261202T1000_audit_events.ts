// The audit trail. Changes of rights (keys, roles, users, sessions) are recorded in the same
// table as the security events (sign-ins, refreshes, revocations): one journal, one order, one
// seal chain, one retention, one read endpoint. Each event now names its actor (a user and their
// session, an API key, the command line, or nobody known), its target, the request id, and for
// changes the fields before and after.
//
// Sealing (src/audit/seal.ts) later stamps each event with the seal of its batch and the hash of
// its content, and appends a row to audit_seals, whose rows form a hash chain. Retention deletes
// the events of whole sealed batches and keeps their seals, so the chain stays verifiable.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // A sealed event must never change; deleting a user (which the service never does) would have
  // rewritten user_id of its events. The id stays as recorded.
  await sql`alter table security_events drop constraint if exists security_events_user_id_fkey`.execute(db);
  await db.schema
    .alterTable('security_events')
    // The command line has no address or user agent.
    .alterColumn('ip_address', (c) => c.dropNotNull())
    .alterColumn('user_agent', (c) => c.dropNotNull())
    .addColumn('actor_type', 'text', (c) => c.notNull().defaultTo('anonymous'))
    .addColumn('actor_id', 'uuid')
    .addColumn('actor_session_id', 'uuid')
    .addColumn('actor_label', 'text')
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'uuid')
    .addColumn('target_label', 'text')
    .addColumn('request_id', 'text')
    .addColumn('changes', 'jsonb')
    .addColumn('seal_id', 'bigint')
    .addColumn('hash', 'bytea')
    .execute();

  // Events recorded before: the person signing in, refreshing or signing out acted on their own
  // session; a failed or throttled sign-in had no known actor; an administrator's revocation did
  // not record who acted ('unknown').
  await sql`
    update security_events set
      actor_type = case
        when type in ('sign_in_failed', 'sign_in_throttled') then 'anonymous'
        when details->>'reason' = 'revoked_by_administrator' then 'unknown'
        else 'user' end,
      target_type = case when session_id is not null and type <> 'password_changed' then 'session' else 'user' end,
      target_id = case when type <> 'password_changed' then coalesce(session_id, user_id) else user_id end,
      target_label = (select u.first_name || ' ' || u.last_name from users u where u.id = user_id)
    where user_id is not null`.execute(db);
  await sql`
    update security_events set
      actor_id = user_id,
      actor_session_id = case when type = 'sign_in_succeeded' then null else session_id end,
      actor_label = target_label
    where actor_type = 'user'`.execute(db);

  await db.schema
    .createTable('audit_seals')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('sealed_at', 'timestamptz', (c) => c.notNull())
    .addColumn('event_count', 'integer', (c) => c.notNull())
    .addColumn('first_event_id', 'bigint', (c) => c.notNull())
    .addColumn('last_event_id', 'bigint', (c) => c.notNull())
    .addColumn('oldest_event_at', 'timestamptz', (c) => c.notNull())
    .addColumn('newest_event_at', 'timestamptz', (c) => c.notNull())
    .addColumn('batch_hash', 'bytea', (c) => c.notNull())
    .addColumn('previous_hash', 'bytea', (c) => c.notNull())
    .addColumn('hash', 'bytea', (c) => c.notNull())
    // Set when retention deleted the batch's events; the seal itself stays in the chain.
    .addColumn('events_deleted_at', 'timestamptz')
    .execute();

  // Reading: newest first by (occurred_at, id), alone or after one of the filters.
  await db.schema.dropIndex('security_events_user_idx').execute();
  await sql`create index security_events_time_idx on security_events (occurred_at, id)`.execute(db);
  await sql`create index security_events_user_time_idx on security_events (user_id, occurred_at, id)`.execute(db);
  await sql`create index security_events_type_time_idx on security_events (type, occurred_at, id)`.execute(db);
  await sql`create index security_events_actor_time_idx on security_events (actor_id, occurred_at, id) where actor_id is not null`.execute(db);
  await sql`create index security_events_target_time_idx on security_events (target_id, occurred_at, id) where target_id is not null`.execute(db);
  // Sealing finds what is not sealed yet; verify and retention read a batch by its seal.
  await sql`create index security_events_unsealed_idx on security_events (id) where seal_id is null`.execute(db);
  await sql`create index security_events_seal_idx on security_events (seal_id, id) where seal_id is not null`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['time', 'user_time', 'type_time', 'actor_time', 'target_time', 'unsealed', 'seal']) {
    await db.schema.dropIndex(`security_events_${name}_idx`).execute();
  }
  await db.schema.dropTable('audit_seals').execute();
  await db.schema
    .alterTable('security_events')
    .dropColumn('actor_type')
    .dropColumn('actor_id')
    .dropColumn('actor_session_id')
    .dropColumn('actor_label')
    .dropColumn('target_type')
    .dropColumn('target_id')
    .dropColumn('target_label')
    .dropColumn('request_id')
    .dropColumn('changes')
    .dropColumn('seal_id')
    .dropColumn('hash')
    .execute();
  await db.schema.createIndex('security_events_user_idx').on('security_events').columns(['user_id', 'occurred_at']).execute();
}
