// An event is declared once, in the contract's `webhooks` section: its type, who hears it
// (`x-required-permission`) and the audit event that publishes it (`x-audit-event`). The outbox, the
// event feed and the subscription checks read that section (src/audit/outbox.ts); these checks hold
// the rest of the contract to it, so that a type declared in one place and forgotten in another fails here.
import { describe, expect, it } from 'vitest';
import { spec } from './support/context.js';
import { EVENT_TYPES, PUBLIC_EVENTS, permissionOfEventType } from '../src/audit/outbox.js';
import { AUDIT_EVENT_TYPES } from '../src/audit/events.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import type { JsonSchema } from '../src/contract/spec.js';

const schemas = spec.components.schemas as Record<string, JsonSchema>;
const webhooks = spec.webhooks as Record<string, { post: Record<string, unknown> }>;
/** Sent to one endpoint on request, never published by a change. */
const TEST_EVENT = 'webhook_endpoint.test';

describe('events are declared once, in the webhooks section', () => {
  it('the outbox publishes exactly the event types the contract lists (EventType), each from the audit events it names', () => {
    const declared = Object.keys(webhooks).filter((type) => type !== TEST_EVENT);
    expect([...EVENT_TYPES].sort()).toEqual(declared.sort());
    expect([...(schemas.EventType!.enum as string[])].sort()).toEqual(declared.sort());
    const named = declared.flatMap((type) => [webhooks[type]!.post['x-audit-event']].flat().map((audit) => [audit, type]));
    expect([...PUBLIC_EVENTS].map(([audit, event]) => [audit, event.type]).sort()).toEqual(named.sort());
    // Each audit event publishes one event type at most.
    expect(new Set(named.map(([audit]) => audit)).size).toBe(named.length);
  });

  it('every event names a permission of the catalogue and an audit event type of the contract', () => {
    for (const [audit, event] of PUBLIC_EVENTS) {
      expect(AUDIT_EVENT_TYPES).toContain(audit);
      expect(PERMISSIONS).toContain(event.permission);
      expect(permissionOfEventType(event.type)).toBe(event.permission);
    }
  });

  it('every event type can be subscribed to at once: no list of event types is capped below their number', () => {
    const lists = Object.entries(schemas).flatMap(([name, schema]) =>
      Object.entries((schema.properties ?? {}) as Record<string, JsonSchema>)
        .filter(([, property]) => (property.items as JsonSchema | undefined)?.$ref === '#/components/schemas/EventType')
        .map(([property, { maxItems }]) => ({ at: `${name}.${property}`, maxItems })),
    );
    expect(lists.length).toBeGreaterThan(2);
    for (const list of lists) expect(list.maxItems, list.at).toBeGreaterThanOrEqual(EVENT_TYPES.length);
  });

  it('a change without its declaration publishes nothing: a type missing from the section is missing from the outbox', () => {
    expect(PUBLIC_EVENTS.get('task_created')).toEqual({ type: 'task.created', permission: 'tasks.read' });
    expect(PUBLIC_EVENTS.get('role_created')).toBeUndefined();
    // A list: a confirmed address change is a user.updated to partners.
    expect(PUBLIC_EVENTS.get('email_changed')).toEqual({ type: 'user.updated', permission: 'users.read' });
  });
});
