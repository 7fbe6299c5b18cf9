// The transactional outbox of events (docs/EVENTS.md): what partners hear derives from the audit
// trail. An audit event of a change a partner may see (`task_updated`, ...) is written together with
// its public event, in one statement of the change's transaction (src/audit/recorder.ts): no change
// without its event, no event of a change rolled back. The delivery workers then fan each event out
// to the endpoints subscribed to it (`fanOutEvents`, src/webhooks/repository.ts). The audit event
// says who changed what (before/after); the event adds what the audit trail must not hold: the
// resource as the REST API shows it, as a partner receives it.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { components } from '../../generated/openapi.js';
import { readContract } from '../contract/spec.js';

export type EventType = components['schemas']['EventType'];

/** A public event: its type (the contract's EventType) and the permission a reader needs at reading time. */
export interface PublicEvent {
  type: EventType;
  permission: string;
}

/**
 * The public events, by the audit event that publishes each: read from the contract's `webhooks`
 * section, where each event's type declares who hears it (`x-required-permission`) and which audit
 * events publish it (`x-audit-event`: one, or a list when several kinds of change are the same
 * event to a partner, as a person's confirmed address change is a `user.updated`). A new event is
 * declared there once; test/events-declared.test.ts holds the section, the EventType enum and the
 * audit event types to one another.
 */
export const PUBLIC_EVENTS: ReadonlyMap<string, PublicEvent> = new Map(
  Object.entries((readContract().webhooks ?? {}) as Record<string, { post?: Record<string, unknown> }>).flatMap(([type, item]) => {
    const declared = item.post?.['x-audit-event'];
    const audits = typeof declared === 'string' ? [declared] : Array.isArray(declared) ? declared.filter((a): a is string => typeof a === 'string') : [];
    const permission = item.post?.['x-required-permission'];
    return typeof permission === 'string' ? audits.map((audit) => [audit, { type: type as EventType, permission }] as const) : [];
  }),
);

export const EVENT_TYPES: readonly EventType[] = [...new Set([...PUBLIC_EVENTS.values()].map((e) => e.type))];

/** The permissions that reading events needs, each once. */
export const EVENT_PERMISSIONS: readonly string[] = [...new Set([...PUBLIC_EVENTS.values()].map((e) => e.permission))];

/** The permission that reading an event of this type needs. */
export function permissionOfEventType(type: string): string | undefined {
  return [...PUBLIC_EVENTS.values()].find((e) => e.type === type)?.permission;
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

/**
 * Deletes up to `batch` events (and, by cascade, their deliveries) past the retention
 * (EVENT_RETENTION_DAYS); answers how many. An event with a delivery still being retried stays
 * until that delivery is finished: the retry schedule may outlast a short retention, and the
 * cascade would otherwise drop a delivery the partner has not had yet.
 */
export async function deleteExpiredEvents(db: Kysely<Database>, now: Date, batch: number, retentionS = EVENT_RETENTION_DAYS * 86_400): Promise<number> {
  const before = new Date(now.getTime() - retentionS * 1000);
  const result = await db
    .deleteFrom('events')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('events as e')
        .select('e.id')
        .where('e.occurred_at', '<', before)
        .where(({ not, exists, selectFrom }) => not(exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.event_id', '=', 'e.id').where('d.status', '=', 'pending'))))
        .limit(batch),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
