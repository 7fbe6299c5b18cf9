// The webhooks' tables: endpoints, deliveries (claimed by the workers) and the event feed.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, WebhookDeliveriesTable, WebhookEndpointsTable } from '../db/schema.js';
import { ADMIN_ROLE_ID } from '../auth/permissions.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';
import { creatorRevision } from '../revisions/revisions.js';
import { DELIVERY_CHANNEL } from '../db/channels.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;

/**
 * An endpoint as listed: its row, its owner's name now, and what its revision is made of in the
 * database (docs/SAFE-WRITES.md): the row's version (a trigger bumps it on every change) and its
 * owner's (a user's version, or a key's name: what `created_by` shows). The service adds what
 * depends on the time (`endpointRevision`, src/webhooks/endpoints.ts).
 */
export type ListedEndpoint = Omit<EndpointRow, 'secret_sealed' | 'secret_key_id' | 'previous_secret_sealed' | 'previous_secret_key_id' | 'version'> & {
  owner_label: string | null;
  stored_revision: string;
};

const storedRevision = sql<string>`w.version::text || '/' || ${creatorRevision('w')}`;

function selectEndpoints(db: Kysely<Database>) {
  return db
    .selectFrom('webhook_endpoints as w')
    .select([
      'w.id',
      'w.url',
      'w.description',
      'w.event_types',
      'w.key_style',
      'w.enabled',
      'w.disabled_reason',
      'w.created_by_user_id',
      'w.created_by_api_key_id',
      'w.previous_secret_until',
      'w.failing_since',
      'w.created_at',
      'w.updated_at',
      sql<string | null>`coalesce((select first_name || ' ' || last_name from users where id = w.created_by_user_id), (select name from api_keys where id = w.created_by_api_key_id))`.as('owner_label'),
      storedRevision.as('stored_revision'),
    ]);
}

export function listEndpoints(db: Kysely<Database>): Promise<ListedEndpoint[]> {
  return selectEndpoints(db).orderBy('w.created_at', 'desc').orderBy('w.id', 'desc').execute();
}

export function findEndpoint(db: Kysely<Database>, id: string): Promise<ListedEndpoint | undefined> {
  return selectEndpoints(db).where('w.id', '=', id).executeTakeFirst();
}

/** What the revision of a locked endpoint is made of (read under the lock of a change, to check its If-Match). */
export function findEndpointRevision(db: Kysely<Database>, id: string): Promise<{ stored_revision: string; previous_secret_until: Date | null } | undefined> {
  return db.selectFrom('webhook_endpoints as w').select([storedRevision.as('stored_revision'), 'w.previous_secret_until']).where('w.id', '=', id).executeTakeFirst();
}

export function lockEndpoint(db: Kysely<Database>, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * Whether the owner of endpoint `w` may read what needs `permission` now: an active person holding
 * it (every permission with the admin role); a live key holding it whose creator (if any) does too
 * (a key is never worth more than its creator: docs/AUTH.md).
 */
export function ownerMayRead(now: Date, permission: ReturnType<typeof sql>) {
  const personHolds = (userId: ReturnType<typeof sql>) => sql`(
    exists (select 1 from user_roles ur where ur.user_id = ${userId} and ur.role_id = ${sql.lit(ADMIN_ROLE_ID)})
    or exists (select 1 from user_roles ur join role_permissions rp on rp.role_id = ur.role_id where ur.user_id = ${userId} and rp.permission = ${permission}))`;
  return sql<boolean>`case
    when w.created_by_user_id is not null then exists (
      select 1 from users u where u.id = w.created_by_user_id and u.status = 'active' and ${personHolds(sql`u.id`)})
    else exists (
      select 1 from api_keys k left join users c on c.id = k.created_by
      where k.id = w.created_by_api_key_id and k.revoked_at is null and (k.expires_at is null or k.expires_at > ${now})
        and ${permission} = any(k.permissions)
        and (k.created_by is null or (c.status = 'active' and ${personHolds(sql`c.id`)})))
  end`;
}

/** Of `permissions`, those the owner of endpoint `endpointId` may read now (ownerMayRead). */
export async function permissionsOwnerMayRead(db: Kysely<Database>, endpointId: string, permissions: readonly string[], now: Date): Promise<string[]> {
  const { rows } = await sql<{ permission: string }>`
    select p.permission from unnest(${[...permissions]}::text[]) as p(permission), webhook_endpoints w
    where w.id = ${endpointId} and ${ownerMayRead(now, sql`p.permission`)}`.execute(db);
  return rows.map((r) => r.permission);
}

/**
 * At most this many deliveries are made by one statement of the relay: its batch of events shrinks
 * as endpoints multiply, so a thousand endpoints cannot make one statement outlive the pool's
 * statement timeout (the relay would then retry the same batch forever, for every endpoint).
 */
const FAN_OUT_ROWS = 5_000;

/**
 * Fans out up to `limit` events to the endpoints subscribed to them (docs/EVENTS.md, "Fan-out"):
 * one pending delivery per enabled endpoint whose types include the event's and that existed when
 * it occurred, due from the event's time. Walks events in (xid, seq) order from the relay's
 * position, which one worker at a time holds (SKIP LOCKED: another worker relaying meanwhile
 * answers 0 at once), and moves it in the same statement. It takes only events whose transaction
 * id is below the snapshot's xmin: those are final (committed, or gone with a rollback), and any
 * event still to commit has an xid at or above xmin, so above the position: none is stepped over
 * (walking `seq` did step over one: a transaction that began later can take an earlier `seq`).
 * A delivery already made for the pair (by a process of the previous release, which made them in
 * the change's statement) is not made twice. Deliveries made send a NOTIFY (at commit), so that
 * every worker, not only this one, claims them. Answers how many events it relayed, whether the
 * batch was full (more may follow at once), and whether an event is held back by a transaction
 * still running (in any database of the cluster: transaction ids are the cluster's).
 */
export async function fanOutEvents(db: Kysely<Database>, limit: number): Promise<{ relayed: number; full: boolean; heldBack: boolean }> {
  const { rows } = await sql<{ relayed: string; full: boolean; held_back: boolean }>`
    with position as (select last_xid, last_seq from event_relay where id = 1 for update skip locked),
    horizon as (select pg_snapshot_xmin(pg_current_snapshot()) as xmin),
    budget as (select greatest(1, least(${limit}::int, ${FAN_OUT_ROWS}::int / greatest(1, count(*)::int))) as events from webhook_endpoints where enabled),
    batch as (
      select e.id, e.xid, e.seq, e.type, e.occurred_at from events e
      where (e.xid, e.seq) > ((select last_xid from position), (select last_seq from position)) and e.xid < (select xmin from horizon)
      order by e.xid, e.seq
      limit (select events from budget)
    ),
    delivery as (
      insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at, created_at)
      select w.id, b.id, b.occurred_at, b.occurred_at from batch b
      join webhook_endpoints w on w.enabled and w.event_types @> array[b.type] and w.created_at <= b.occurred_at
      where not exists (select 1 from webhook_deliveries d where d.event_id = b.id and d.endpoint_id = w.id)
      returning 1
    ),
    newest as (select xid, seq from batch order by xid desc, seq desc limit 1),
    moved as (
      update event_relay set (last_xid, last_seq) = (select xid, seq from newest) where id = 1 and exists (select 1 from newest) returning 1
    )
    select (select count(*) from batch) as relayed, (select count(*) from batch) = (select events from budget) as full, (select count(*) from moved) as moved,
      (select count(pg_notify(${DELIVERY_CHANNEL}, '')) from (select 1 from delivery limit 1) as made) as notified,
      exists (select 1 from position) and exists (select 1 from events where xid >= (select xmin from horizon)) as held_back`.execute(db);
  const row = rows[0];
  return { relayed: Number(row?.relayed ?? 0), full: row?.full ?? false, heldBack: row?.held_back ?? false };
}

/** A delivery claimed for one attempt, with what sending it needs. */
export interface ClaimedDelivery {
  id: string;
  attempts: number;
  event_id: string;
  event_type: string;
  payload: Record<string, unknown>;
  endpoint_id: string;
  url: string;
  key_style: string;
  secret_sealed: Buffer;
  secret_key_id: string | null;
  previous_secret_sealed: Buffer | null;
  previous_secret_key_id: string | null;
  previous_secret_until: Date | null;
  permitted: boolean;
}

/**
 * Claims up to `limit` due deliveries for one attempt each: rows locked by another worker's claim
 * are skipped (FOR UPDATE SKIP LOCKED), and the claim commits at once with `next_attempt_at` moved
 * to the end of the lease, so no connection is held while the receiver answers, and a worker that
 * dies mid-attempt leaves the delivery due again when the lease ends (the same event, the same
 * webhook-id). Disabled endpoints get only their test events.
 */
export async function claimDue(db: Kysely<Database>, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await sql<ClaimedDelivery>`
    with due as (
      select d.id from webhook_deliveries d
      join webhook_endpoints w on w.id = d.endpoint_id
      where d.status = 'pending' and d.next_attempt_at <= ${now}
        and (w.enabled or exists (select 1 from events e where e.id = d.event_id and e.type = 'webhook_endpoint.test'))
      order by d.next_attempt_at
      limit ${limit}
      for update of d skip locked
    )
    update webhook_deliveries d
    set attempts = d.attempts + 1, next_attempt_at = ${leaseUntil}, last_attempt_at = ${now}
    from due, webhook_endpoints w, events e
    where d.id = due.id and w.id = d.endpoint_id and e.id = d.event_id
    returning d.id, d.attempts, e.id as event_id, e.type as event_type, e.payload, w.id as endpoint_id, w.url, w.key_style,
      w.secret_sealed, w.secret_key_id, w.previous_secret_sealed, w.previous_secret_key_id, w.previous_secret_until, ${ownerMayRead(now, sql`e.required_permission`)} as permitted`.execute(db);
  return rows;
}

export interface AttemptRecord {
  status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  nextAttemptAt: Date | null;
  statusCode: number | null;
  durationMs: number | null;
  error: string | null;
  response: string | null;
}

/** Writes how an attempt went, unless the lease ran out and another attempt took the delivery meanwhile. */
export async function recordAttempt(db: Kysely<Database>, id: string, attempt: number, record: AttemptRecord): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: record.status,
      next_attempt_at: record.nextAttemptAt,
      last_status_code: record.statusCode,
      last_duration_ms: record.durationMs,
      last_error: record.error,
      last_response: record.response,
    })
    .where('id', '=', id)
    .where('attempts', '=', attempt)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function markEndpointHealthy(db: Kysely<Database>, endpointId: string): Promise<void> {
  await db.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', '=', endpointId).where('failing_since', 'is not', null).execute();
}

/** Notes a failure; answers whether the endpoint has now failed since at least `disableBefore` and is still enabled. */
export async function markEndpointFailing(db: Kysely<Database>, endpointId: string, now: Date, disableBefore: Date): Promise<boolean> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({ failing_since: sql`coalesce(failing_since, ${now}::timestamptz)` })
    .where('id', '=', endpointId)
    .returning(sql<boolean>`enabled and failing_since <= ${disableBefore}::timestamptz`.as('due'))
    .executeTakeFirst();
  return row?.due ?? false;
}

export type DeliveryRow = Omit<Selectable<WebhookDeliveriesTable>, 'next_attempt_at' | 'last_attempt_at' | 'created_at' | 'endpoint_id'> & {
  event_type: string;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  created_at: string;
  cursor_created_at: string;
};

/**
 * An endpoint's deliveries of events the caller may read (`permissions`; as GET /events lists them:
 * a delivery names its event's type and time, which tell of a change). Every way to a delivery
 * (list, read, replay) starts here, so one hidden from the list is unknown to all of them.
 */
function readableDeliveries(db: Kysely<Database>, endpointId: string, permissions: readonly string[]) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .select(['d.id', 'd.event_id', 'e.type as event_type', 'd.status', 'd.attempts', 'd.last_status_code', 'd.last_duration_ms', 'd.last_error', 'd.last_response'])
    .select([isoMillis('d.next_attempt_at').as('next_attempt_at'), isoMillis('d.last_attempt_at').as('last_attempt_at'), isoMillis('d.created_at').as('created_at'), isoMicros('d.created_at').as('cursor_created_at')])
    .where('d.endpoint_id', '=', endpointId)
    .where('e.required_permission', 'in', permissions.length ? [...permissions] : ['']);
}

/** One page of the deliveries the caller may read (`readableDeliveries`), newest first; `limit + 1` rows tell whether more follow. */
export function listDeliveries(db: Kysely<Database>, endpointId: string, permissions: readonly string[], limit: number, after?: { createdAt: string; id: string }): Promise<DeliveryRow[]> {
  let query = readableDeliveries(db, endpointId, permissions);
  if (after) query = query.where(sql<boolean>`(d.created_at, d.id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
  return query.orderBy('d.created_at', 'desc').orderBy('d.id', 'desc').limit(limit + 1).execute() as Promise<DeliveryRow[]>;
}

/** One delivery, if the caller may read it (`readableDeliveries`). */
export function findDelivery(db: Kysely<Database>, endpointId: string, id: string, permissions: readonly string[]): Promise<DeliveryRow | undefined> {
  return readableDeliveries(db, endpointId, permissions).where('d.id', '=', id).executeTakeFirst() as Promise<DeliveryRow | undefined>;
}

/** A new delivery of an event to an endpoint, due now; NOTIFY wakes the workers at commit. */
export async function insertDelivery(db: Kysely<Database>, endpointId: string, eventId: string, now: Date): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    with delivery as (
      insert into webhook_deliveries (endpoint_id, event_id, next_attempt_at, created_at) values (${endpointId}, ${eventId}, ${now}, ${now}) returning id
    )
    select id, pg_notify(${DELIVERY_CHANNEL}, '') from delivery`.execute(db);
  return rows[0]!.id;
}

/** A place in the feed, in (xid, seq) order: see `fanOutEvents` for why not `seq` alone. */
export interface FeedPosition {
  xid: string;
  seq: string;
}

/**
 * Events after `after` the caller may read (`permissions`), in (xid, seq) order: roughly oldest
 * first. An event is listed only once its transaction id is below the snapshot's xmin (final:
 * every event still to commit has a larger xid, so sorts after the cursor), so a poller never
 * steps over an event committed late (as the relay: `fanOutEvents`).
 */
export async function listEvents(
  db: Kysely<Database>,
  options: { after: FeedPosition; permissions: readonly string[]; types?: readonly string[]; since: Date; limit: number },
): Promise<{ position: FeedPosition; payload: Record<string, unknown> }[]> {
  let query = db
    .selectFrom('events')
    .select([sql<string>`xid::text`.as('xid_text'), 'seq', 'payload'])
    .where(sql<boolean>`(xid, seq) > (${options.after.xid}::xid8, ${options.after.seq}::bigint)`)
    .where('occurred_at', '>', options.since)
    .where('required_permission', 'in', options.permissions.length ? [...options.permissions] : [''])
    .where('type', '<>', 'webhook_endpoint.test')
    .where(sql<boolean>`xid < pg_snapshot_xmin(pg_current_snapshot())`);
  if (options.types?.length) query = query.where('type', 'in', [...options.types]);
  // By the column, not an output name: `xid_text` would sort as text.
  const rows = await query.orderBy('events.xid').orderBy('events.seq').limit(options.limit).execute();
  return rows.map((r) => ({ position: { xid: r.xid_text, seq: String(r.seq) }, payload: r.payload }));
}

/**
 * Where a cursor of the feed from before (xid, seq) order stands: just before the first event
 * that could follow `seq` (the smallest xid among the events after it), so that a poller's next
 * page repeats events rather than skip one (at least once, as deliveries are); at the end when
 * none follows.
 */
export async function feedPositionOfSeq(db: Kysely<Database>, seq: string): Promise<FeedPosition> {
  const { rows } = await sql<{ xid: string | null }>`select min(xid)::text as xid from events where seq > ${seq}::bigint`.execute(db);
  if (rows[0]?.xid) return { xid: rows[0].xid, seq: '0' };
  // Nothing after it: the poller is at the end, which is the newest event.
  const { rows: newest } = await sql<FeedPosition>`select xid::text as xid, seq::text as seq from events order by xid desc, seq desc limit 1`.execute(db);
  return newest[0] ?? { xid: '0', seq: '0' };
}
