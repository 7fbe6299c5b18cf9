// Writes one audit event, on the connection or transaction it is given: called inside the
// transaction of the change it records, so there is no change without its event and no event
// without its change. Inserting takes no lock: sealing (src/audit/seal.ts) happens later, in batches.
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { randomUUID } from 'node:crypto';
import type { AuditContext, AuditEventType, Changes, Target, TargetLabel } from './events.js';
import { DELIVERY_CHANNEL } from '../db/channels.js';
import { PUBLIC_EVENTS, type Publication } from './outbox.js';
import { queueNotice } from '../mail/notices.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface AuditEventInput {
  type: AuditEventType;
  at: Date;
  context: AuditContext;
  target?: Target | null;
  /** The person the event concerns (whose account, session or key it is), when there is one. */
  userId?: string | null;
  /** The session concerned, when there is one. */
  sessionId?: string | null;
  details?: Record<string, string | number | boolean | null>;
  changes?: Changes | null;
  /**
   * For a change partners may hear of (PUBLIC_EVENTS: tasks, meetings, users, a revoked key):
   * the resource as the REST API shows it. Written as an event in the same statement (outbox.ts).
   */
  publish?: Publication;
}

/** Same limit as the sessions' user agents: the header is the client's to fill. */
const USER_AGENT_MAX_LENGTH = 512;

/**
 * Names of fields that would carry a credential (`password`, `password_hash`, `access_token`, ...).
 * The recorder refuses them, so a careless caller fails its tests instead of leaking one; a fact
 * about a credential (`password_set`) is fine.
 */
const SECRET_NAME = /(^|_)(password|secret|digest|token|hash)$/i;

function assertNoSecretNames(value: unknown, where: string): void {
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    if (SECRET_NAME.test(key)) throw new Error(`An audit event's ${where} may not hold "${key}".`);
    assertNoSecretNames(inner, where);
  }
}

const fullName = (userId: string): RawBuilder<string | null> => sql`(select first_name || ' ' || last_name from users where id = ${userId})`;

function targetLabel(target: Target): RawBuilder<string | null> {
  if (target.label === undefined) return fullName(target.id);
  return isRawBuilder(target.label) ? target.label : sql`${target.label}`;
}

const isRawBuilder = (label: TargetLabel): label is RawBuilder<string | null> => typeof label === 'object' && label !== null && 'toOperationNode' in label;

export async function recordAuditEvent(db: Db, event: AuditEventInput): Promise<void> {
  assertNoSecretNames(event.details, 'details');
  assertNoSecretNames(event.changes?.before, 'changes');
  assertNoSecretNames(event.changes?.after, 'changes');
  const { actor, requestId, ip, userAgent } = event.context;
  const actorColumns =
    actor.type === 'user'
      ? { actor_id: actor.userId, actor_session_id: actor.sessionId, actor_label: fullName(actor.userId) }
      : actor.type === 'api_key'
        ? { actor_id: actor.apiKeyId, actor_session_id: null, actor_label: sql<string | null>`(select name from api_keys where id = ${actor.apiKeyId})` }
        : { actor_id: null, actor_session_id: null, actor_label: actor.type === 'cli' ? actor.osUser : actor.type === 'system' ? 'backoffice-api' : null };
  const target = event.target ?? null;
  const audit = db
    .insertInto('security_events')
    .values({
      type: event.type,
      occurred_at: event.at,
      user_id: event.userId ?? null,
      session_id: event.sessionId ?? null,
      ip_address: ip,
      user_agent: userAgent === null || userAgent.length <= USER_AGENT_MAX_LENGTH ? userAgent : [...userAgent].slice(0, USER_AGENT_MAX_LENGTH).join(''),
      actor_type: actor.type,
      ...actorColumns,
      target_type: target?.type ?? null,
      target_id: target?.id ?? null,
      target_label: target ? targetLabel(target) : null,
      request_id: requestId,
      details: JSON.stringify(event.details ?? {}),
      changes: event.changes ? JSON.stringify(event.changes) : null,
    });
  // A change the person should hear of (a security notice, src/mail/notices.ts): its message, in
  // the same transaction. Nothing for every other event.
  await queueNotice(db, event);
  const published = event.publish ? PUBLIC_EVENTS.get(event.type) : undefined;
  if (!published || !event.publish) {
    await audit.execute();
    return;
  }
  // The audit event, its public event and the NOTIFY that wakes the delivery workers (sent by
  // PostgreSQL at COMMIT, never for a rollback): one round trip. The deliveries are not made here:
  // the workers fan the event out to the endpoints subscribed to it (`fanOutEvents`,
  // src/webhooks/repository.ts), so a
  // change costs the same whether anyone listens or not.
  const id = randomUUID();
  const isUpdate = published.type.endsWith('.updated');
  const changedFields = event.publish.changedFields ?? Object.keys(event.changes?.after ?? {});
  const payload = {
    id,
    type: published.type,
    occurred_at: event.at.toISOString(),
    ...(isUpdate ? { changed_fields: [...changedFields] } : {}),
    data: event.publish.data,
  };
  await sql`
    with audit as (${audit.returning('id')}),
    event as (
      insert into events (id, type, occurred_at, audit_event_id, required_permission, payload)
      select ${id}::uuid, ${published.type}, ${event.at}, audit.id, ${published.permission}, ${JSON.stringify(payload)}::jsonb from audit
      returning id
    )
    select pg_notify(${DELIVERY_CHANNEL}, '') from event`.execute(db);
}
