// Handlers of the API key operations. The contract lets only signed-in users in (bearerAuth).
import type { PlatformServices } from '../services.js';
import type { Handler } from '../http/handler-types.js';
import { presentApiKey } from './presenter.js';
import type { ShownApiKey } from './repository.js';
import type { KeyWithSecret } from './service.js';
import type { Answer } from '../idempotency/service.js';
import { requireCaller, signedInUser } from '../auth/caller.js';
import { NO_STORE } from '../http/no-store.js';
import { revisionOf } from '../http/entity-tags.js';

/** One key, with its revision (the router answers it as the ETag). */
const shown = (key: ShownApiKey) => ({ status: 200 as const, body: presentApiKey(key), revision: revisionOf(key.id, key.revision) });

/** A key and its secret, shown this once. */
const withSecret = <S extends 200 | 201>(status: S, { key, secret }: KeyWithSecret) => ({
  status,
  body: { api_key: presentApiKey(key), secret: secret as string | null },
  headers: NO_STORE,
  revision: revisionOf(key.id, key.revision),
});

/**
 * What an Idempotency-Key keeps of an answer with a secret: everything but the secret, which is
 * never stored (docs/SAFE-WRITES.md). A replay says `secret: null`: the key exists, its secret was
 * shown to the first answer only; rotate the key for a new one.
 */
const withoutSecret = (first: ReturnType<typeof withSecret>): Answer => ({ ...first, body: { ...first.body, secret: null } });

export function apiKeyHandlers({ apiKeys: keys, idempotency, leakReports }: Pick<PlatformServices, 'apiKeys' | 'idempotency' | 'leakReports'>) {

  const listApiKeys: Handler<'listApiKeys'> = async ({ query }) => {
    const rows = await keys.list({ expiringWithinDays: query.expiring_within_days });
    return { status: 200, body: { data: rows.map(presentApiKey) } };
  };

  const getApiKey: Handler<'getApiKey'> = async ({ path }) => shown(await keys.get(path.id));

  const createApiKey: Handler<'createApiKey'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.onceDrafted(
      key,
      () => keys.draft(signedInUser(principal), body),
      (trx, draft) => keys.create(trx, signedInUser(principal), draft, request),
      (made) => withSecret(201, made),
      withoutSecret,
    );

  const updateApiKey: Handler<'updateApiKey'> = async ({ body, path, principal, request, precondition }) =>
    shown(await keys.update(requireCaller(principal), path.id, body, request, precondition));

  const revokeApiKey: Handler<'revokeApiKey'> = async ({ path, principal, request, precondition }) => {
    await keys.revoke(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  const rotateApiKey: Handler<'rotateApiKey'> = ({ body, path, principal, request, idempotency: key }) =>
    idempotency.onceDrafted(
      key,
      () => keys.draftRotation(requireCaller(principal), path.id, body.grace_period_seconds ?? 0),
      (trx, rotation) => keys.rotate(trx, requireCaller(principal), rotation, request),
      (made) => withSecret(200, made),
      withoutSecret,
    );

  const getApiKeyUsage: Handler<'getApiKeyUsage'> = async ({ path, query }) => {
    const hours = await keys.usage(path.id, { from: query.from, until: query.until });
    return { status: 200, body: { data: hours.map((h) => ({ ...h, hour: h.hour.toISOString() })) }, headers: NO_STORE };
  };

  // Authenticated by the partner's signature over the body (x-authenticated-by: handler).
  const reportLeakedApiKeys: Handler<'reportLeakedApiKeys'> = async ({ body, headers, request }) => {
    const header = (name: string) => (typeof headers[name] === 'string' ? headers[name] : undefined);
    const answers = await leakReports.report(
      { keyId: header('github-public-key-identifier'), signature: header('github-public-key-signature'), body: request.signedBody },
      body,
      request,
    );
    return { status: 200, body: answers, headers: NO_STORE };
  };

  return { listApiKeys, getApiKey, createApiKey, updateApiKey, revokeApiKey, rotateApiKey, getApiKeyUsage, reportLeakedApiKeys };
}
