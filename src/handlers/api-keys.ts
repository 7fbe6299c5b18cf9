// Handlers of the API key operations. The contract lets only signed-in users in (bearerAuth).
import type { Services } from '../services.js';
import type { Handler } from '../contract/handler-types.js';
import { presentApiKey } from '../api-keys/presenter.js';
import { requireCaller, signedInUser } from '../auth/caller.js';
import { NO_STORE } from './headers.js';


export function apiKeyHandlers({ apiKeys: keys }: Services) {

  const listApiKeys: Handler<'listApiKeys'> = async ({ query }) => {
    const rows = await keys.list({ expiringWithinDays: query?.expiring_within_days });
    return { status: 200, body: { data: rows.map(presentApiKey) } };
  };

  const getApiKey: Handler<'getApiKey'> = async ({ path }) => ({ status: 200, body: presentApiKey(await keys.get(path.id)) });

  const createApiKey: Handler<'createApiKey'> = async ({ body, principal, request }) => {
    const { key, secret } = await keys.create(signedInUser(principal), body, request);
    return { status: 201, body: { api_key: presentApiKey(key), secret }, headers: NO_STORE };
  };

  const updateApiKey: Handler<'updateApiKey'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: presentApiKey(await keys.update(requireCaller(principal), path.id, body, request)),
  });

  const revokeApiKey: Handler<'revokeApiKey'> = async ({ path, principal, request }) => {
    await keys.revoke(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  const rotateApiKey: Handler<'rotateApiKey'> = async ({ body, path, principal, request }) => {
    const { key, secret } = await keys.rotate(requireCaller(principal), path.id, body.grace_period_seconds ?? 0, request);
    return { status: 200, body: { api_key: presentApiKey(key), secret }, headers: NO_STORE };
  };

  return { listApiKeys, getApiKey, createApiKey, updateApiKey, revokeApiKey, rotateApiKey };
}
