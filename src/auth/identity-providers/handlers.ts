// Handlers of the Identity providers operations (and their French paths), and of signing in
// with one (POST /sessions/oidc, POST /sessions/oidc/callback).
import type { PlatformServices } from '../../services.js';
import type { Handler } from '../../http/handler-types.js';
import { requireCaller, signedInUser as signedIn } from '../caller.js';
import { presentIdentityProvider } from './presenter.js';
import type { Provider } from './repository.js';
import { NO_STORE, NO_STORE_TOKENS } from '../../http/no-store.js';
import { revisionOf } from '../../http/entity-tags.js';

export function identityProviderHandlers({ identityProviders, oidcSignIn, oidcStepUp, idempotency, config }: Pick<PlatformServices, 'identityProviders' | 'oidcSignIn' | 'oidcStepUp' | 'idempotency' | 'config'>) {
  const present = (provider: Provider) => presentIdentityProvider(provider, config.oidc.redirectUri);
  /** One provider, with its revision (the router answers it as the ETag). */
  const shown = (provider: Provider) => ({ status: 200 as const, body: present(provider), revision: revisionOf(provider.id, provider.revision) });

  const listIdentityProviders: Handler<'listIdentityProviders'> = async ({ query }) => {
    const { page, nextCursor } = await identityProviders.list(query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getIdentityProvider: Handler<'getIdentityProvider'> = async ({ path }) => shown(await identityProviders.get(path.id));

  const createIdentityProvider: Handler<'createIdentityProvider'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.onceDrafted(
      key,
      () => identityProviders.draft(requireCaller(principal), body),
      (trx, draft) => identityProviders.create(trx, requireCaller(principal), draft, request),
      // Shown, and stored under an Idempotency-Key, without its client secret (docs/SAFE-WRITES.md).
      (provider) => ({ status: 201 as const, body: present(provider), headers: { Location: `/identity-providers/${provider.id}` }, revision: revisionOf(provider.id, provider.revision) }),
    );

  const updateIdentityProvider: Handler<'updateIdentityProvider'> = async ({ body, path, principal, request, precondition }) =>
    shown(await identityProviders.update(requireCaller(principal), path.id, body, request, precondition));

  const deleteIdentityProvider: Handler<'deleteIdentityProvider'> = async ({ path, principal, request, precondition }) => {
    await identityProviders.remove(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  const startOidcSignIn: Handler<'startOidcSignIn'> = async ({ body, request }) => ({ status: 201, body: await oidcSignIn.start(body, request), headers: NO_STORE });

  const completeOidcSignIn: Handler<'completeOidcSignIn'> = async ({ body, request }) => {
    const outcome = await oidcSignIn.complete(body, request);
    if ('challenge' in outcome) return { status: 202, body: { second_factor: outcome.challenge }, headers: NO_STORE_TOKENS };
    return { status: 201, body: outcome.tokens, headers: NO_STORE_TOKENS };
  };

  const startOidcStepUp: Handler<'startOidcStepUp'> = async ({ principal, request }) => ({
    status: 201,
    body: await oidcStepUp.start(signedIn(principal), request),
    headers: NO_STORE,
  });

  const completeOidcStepUp: Handler<'completeOidcStepUp'> = async ({ body, principal, request }) => ({
    status: 200,
    body: await oidcStepUp.complete(signedIn(principal), body, request),
    headers: NO_STORE,
  });

  return {
    startOidcStepUp,
    completeOidcStepUp,
    listIdentityProviders,
    getIdentityProvider,
    createIdentityProvider,
    updateIdentityProvider,
    deleteIdentityProvider,
    startOidcSignIn,
    completeOidcSignIn,
  };
}
