// Handlers of the Webhooks operations (and their French paths) and of the event feed.
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import type { Answer } from '../idempotency/service.js';
import type { ShownEndpoint } from './endpoints.js';
import { requireCaller } from '../auth/caller.js';
import { NO_STORE } from '../http/no-store.js';
import { revisionOf } from '../http/entity-tags.js';

type Made = ShownEndpoint & { secret: string };

/** One endpoint, with its revision (the router answers it as the ETag). */
const shown = ({ endpoint, revision }: ShownEndpoint) => ({ status: 200 as const, body: endpoint, revision: revisionOf(endpoint.id, revision) });

/** The endpoint and its secret, shown this once, with the endpoint's ETag. */
const withSecret = <S extends 200 | 201>(status: S, { endpoint, secret, revision }: Made) => ({
  status,
  body: { webhook_endpoint: endpoint, secret: secret as string | null },
  headers: { ...NO_STORE, ...(status === 201 ? { Location: `/webhook-endpoints/${endpoint.id}` } : {}) },
  revision: revisionOf(endpoint.id, revision),
});

/** A replay of the create (Idempotency-Key) never shows the secret again: it is not stored (docs/SAFE-WRITES.md). */
const withoutSecret = (first: ReturnType<typeof withSecret>): Answer => ({ ...first, body: { ...first.body, secret: null } });

export function webhookHandlers({ webhookEndpoints: webhooks, webhookDeliveries: deliveries, eventFeed, idempotency }: Pick<PlatformServices, 'webhookEndpoints' | 'webhookDeliveries' | 'eventFeed' | 'idempotency'>) {
  const listWebhookEndpoints: Handler<'listWebhookEndpoints'> = async () => ({ status: 200, body: { data: await webhooks.list() } });

  const createWebhookEndpoint: Handler<'createWebhookEndpoint'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.onceDrafted(
      key,
      () => webhooks.draft(requireCaller(principal), body),
      (trx, draft) => webhooks.create(trx, requireCaller(principal), draft, request),
      (made) => withSecret(201, made),
      withoutSecret,
    );

  const getWebhookEndpoint: Handler<'getWebhookEndpoint'> = async ({ path }) => shown(await webhooks.get(path.id));

  const updateWebhookEndpoint: Handler<'updateWebhookEndpoint'> = async ({ body, path, principal, request, precondition }) =>
    shown(await webhooks.update(requireCaller(principal), path.id, body, request, precondition));

  const deleteWebhookEndpoint: Handler<'deleteWebhookEndpoint'> = async ({ path, principal, request, precondition }) => {
    await webhooks.remove(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  const rotateWebhookEndpointSecret: Handler<'rotateWebhookEndpointSecret'> = async ({ body, path, principal, request }) =>
    withSecret(200, await webhooks.rotate(requireCaller(principal), path.id, body?.grace_period_seconds, request));

  const testWebhookEndpoint: Handler<'testWebhookEndpoint'> = async ({ path, principal }) => ({ status: 202, body: await deliveries.test(requireCaller(principal), path.id) });

  const listWebhookDeliveries: Handler<'listWebhookDeliveries'> = async ({ path, query, principal }) => ({ status: 200, body: await deliveries.list(requireCaller(principal), path.id, query ?? {}) });

  const replayWebhookDelivery: Handler<'replayWebhookDelivery'> = async ({ path, principal }) => ({ status: 202, body: await deliveries.replay(requireCaller(principal), path.id, path.delivery_id) });

  const listEvents: Handler<'listEvents'> = async ({ principal, query }) => ({
    status: 200,
    body: (await eventFeed.read(requireCaller(principal), query ?? {})) as never,
  });

  return {
    listWebhookEndpoints,
    createWebhookEndpoint,
    getWebhookEndpoint,
    updateWebhookEndpoint,
    deleteWebhookEndpoint,
    rotateWebhookEndpointSecret,
    testWebhookEndpoint,
    listWebhookDeliveries,
    replayWebhookDelivery,
    listEvents,
  };
}
