// The transactional outbox of events (docs/EVENTS.md): what partners hear derives from the audit
// trail. An audit event of a change a partner may see (`task_updated`, ...) is written together with
// its public event, in one statement of the change's transaction (src/audit/recorder.ts): no change
// without its event, no event of a change rolled back. The delivery workers then fan each event out
// to the endpoints subscribed to it (`fanOutEvents`, src/webhooks/repository.ts). The audit event
// says who changed what (before/after); the event adds what the audit trail must not hold: the
// resource as the REST API shows it, as a partner receives it.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { AuditEventType } from './events.js';

/** The public event types (the contract's EventType), with the permission a reader needs at reading time. */
export const PUBLIC_EVENTS = {
  task_created: { type: 'task.created', permission: 'tasks.read' },
  task_updated: { type: 'task.updated', permission: 'tasks.read' },
  task_deleted: { type: 'task.deleted', permission: 'tasks.read' },
  meeting_created: { type: 'meeting.created', permission: 'meetings.read' },
  meeting_updated: { type: 'meeting.updated', permission: 'meetings.read' },
  meeting_deleted: { type: 'meeting.deleted', permission: 'meetings.read' },
  user_created: { type: 'user.created', permission: 'users.read' },
  user_updated: { type: 'user.updated', permission: 'users.read' },
  user_disabled: { type: 'user.disabled', permission: 'users.read' },
  api_key_revoked: { type: 'api_key.revoked', permission: 'api_keys.manage' },
} as const satisfies Partial<Record<AuditEventType, { type: string; permission: string }>>;

export type PublishedAuditType = keyof typeof PUBLIC_EVENTS;
export type EventType = (typeof PUBLIC_EVENTS)[PublishedAuditType]['type'];

export const EVENT_TYPES: readonly EventType[] = Object.values(PUBLIC_EVENTS).map((e) => e.type);

/** The permissions that reading events needs, each once. */
export const EVENT_PERMISSIONS: readonly string[] = [...new Set(Object.values(PUBLIC_EVENTS).map((e) => e.permission))];

/** The permission that reading an event of this type needs. */
export function permissionOfEventType(type: string): string | undefined {
  return Object.values(PUBLIC_EVENTS).find((e) => e.type === type)?.permission;
}

/** How long events (and their deliveries) are kept: the feed's promise. */
export const EVENT_RETENTION_DAYS = 30;

/**
 * What a change publishes: the resource as the REST API shows it (its presenter's output, in
 * snake_case), and for an update the names of the fields of it that changed (by default, the
 * fields of the audit event's `changes`).
 */
export interface Publication {
  data: object;
  changedFields?: readonly string[];
}

/** Deletes up to `batch` events (and, by cascade, their deliveries) past the retention; answers how many. */
export async function deleteExpiredEvents(db: Kysely<Database>, now: Date, batch: number): Promise<number> {
  const before = new Date(now.getTime() - EVENT_RETENTION_DAYS * 86_400_000);
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (eb) => eb.selectFrom('events').select('id').where('occurred_at', '<', before).limit(batch))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
