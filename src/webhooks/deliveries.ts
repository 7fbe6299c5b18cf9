// The deliveries of a webhook endpoint: a test event, the list of what was sent, and a replay.
// A delivery of an event the caller may not read is not found, in the list as in a replay: its
// answer names the event (repository.ts, readableDeliveries).
import { randomUUID } from 'node:crypto';
import type { components } from '../../generated/openapi.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { DomainError, invalid } from '../errors.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { openCursor, sealCursor } from '../pagination/signed-cursor.js';
import { resourceId, UUID } from '../uuid.js';
import * as repo from './repository.js';
import { findEndpointOr404 } from './endpoints.js';

export type WebhookDeliveryResource = components['schemas']['WebhookDelivery'];

const DEFAULT_PAGE_SIZE = 50;
const TEST_EVENT = 'webhook_endpoint.test';

const deliveryNotFound = () => new DomainError('not_found', 'not_found', 'No delivery of this webhook endpoint has this id.');
const invalidCursor = () =>
  invalid('invalid_cursor', 'The cursor is not one this service issued for this list; start again without it.', {
    errors: [{ location: 'request/query/cursor', message: 'is not a cursor issued for this list' }],
  });

export function presentDelivery(d: repo.DeliveryRow): WebhookDeliveryResource {
  return {
    id: d.id,
    event_id: d.event_id,
    event_type: d.event_type,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.next_attempt_at,
    last_attempt_at: d.last_attempt_at,
    last_status_code: d.last_status_code,
    last_duration_ms: d.last_duration_ms,
    last_error: d.last_error,
    last_response: d.last_response,
    created_at: d.created_at,
  };
}

export class WebhookDeliveryService {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock'>) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  /** A `webhook_endpoint.test` event for this endpoint only. */
  async test(caller: Principal, id: string) {
    return this.deps.db.transaction().execute(async (trx) => {
      const endpoint = await this.find(trx, id);
      const now = this.deps.clock.now();
      const eventId = randomUUID();
      const payload = { id: eventId, type: TEST_EVENT, occurred_at: now.toISOString(), data: { webhook_endpoint_id: endpoint.id } };
      await trx.insertInto('events').values({ id: eventId, type: TEST_EVENT, occurred_at: now, audit_event_id: null, required_permission: 'webhooks.manage', payload: JSON.stringify(payload) }).execute();
      const deliveryId = await repo.insertDelivery(trx, endpoint.id, eventId, now);
      return presentDelivery((await repo.findDelivery(trx, endpoint.id, deliveryId, [...caller.permissions]))!);
    });
  }

  async list(caller: Principal, id: string, query: { limit?: number; cursor?: string }) {
    const endpoint = await this.find(this.deps.db, id);
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const scope = ['webhook_deliveries', endpoint.id];
    let after: { createdAt: string; id: string } | undefined;
    if (query.cursor !== undefined) {
      const { t, i } = openCursor(await this.cursorKey(), query.cursor, scope);
      if (typeof t !== 'string' || typeof i !== 'string' || !UUID.test(i)) throw invalidCursor();
      after = { createdAt: t, id: i };
    }
    const rows = await repo.listDeliveries(this.deps.db, endpoint.id, [...caller.permissions], limit, after);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const nextCursor = rows.length > limit && last ? sealCursor(await this.cursorKey(), { t: last.cursor_created_at, i: last.id }, scope) : null;
    return { data: page.map(presentDelivery), next_cursor: nextCursor };
  }

  /**
   * The delivery's event again, as a new delivery (same webhook-id: the event's). A delivery of an
   * event the caller may not read is not found, as in the list: its answer names the event.
   */
  async replay(caller: Principal, id: string, deliveryId: string) {
    const permissions = [...caller.permissions];
    return this.deps.db.transaction().execute(async (trx) => {
      const endpoint = await this.find(trx, id);
      const knownDelivery = resourceId(deliveryId);
      const delivery = knownDelivery ? await repo.findDelivery(trx, endpoint.id, knownDelivery, permissions) : undefined;
      if (!delivery) throw deliveryNotFound();
      const fresh = await repo.insertDelivery(trx, endpoint.id, delivery.event_id, this.deps.clock.now());
      return presentDelivery((await repo.findDelivery(trx, endpoint.id, fresh, permissions))!);
    });
  }

  private find(on: Parameters<typeof findEndpointOr404>[0], id: string) {
    return findEndpointOr404(on, id);
  }
}
