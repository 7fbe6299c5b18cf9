// Handlers of the Identity providers operations (and their French paths), and of signing in
// with one (POST /sessions/oidc, POST /sessions/oidc/callback).
import type { Services } from '../services.js';
import type { Handler } from './types.js';
import { requireCaller } from '../auth/caller.js';
import { presentIdentityProvider } from '../identity/presenter.js';
import type { Provider } from '../identity/repository.js';
import { NO_STORE, NO_STORE_TOKENS } from './headers.js';

export function identityProviderHandlers({ identityProviders, oidcSignIn, idempotency, config }: Services) {
  const present = (provider: Provider) => presentIdentityProvider(provider, config.oidc.redirectUri);

  const listIdentityProviders: Handler<'listIdentityProviders'> = async () => ({ status: 200, body: { data: (await identityProviders.list()).map(present) } });

  const getIdentityProvider: Handler<'getIdentityProvider'> = async ({ path }) => ({ status: 200, body: present(await identityProviders.get(path.id)) });

  const createIdentityProvider: Handler<'createIdentityProvider'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(key, (seal) => identityProviders.create(requireCaller(principal), body, request, seal), (provider: Provider) => ({ status: 201 as const, body: present(provider) }));

  const updateIdentityProvider: Handler<'updateIdentityProvider'> = async ({ body, path, principal, request }) => ({
    status: 200,
    body: present(await identityProviders.update(requireCaller(principal), path.id, body, request)),
  });

  const deleteIdentityProvider: Handler<'deleteIdentityProvider'> = async ({ path, principal, request }) => {
    await identityProviders.remove(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  const startOidcSignIn: Handler<'startOidcSignIn'> = async ({ body }) => ({ status: 201, body: await oidcSignIn.start(body), headers: NO_STORE });

  const completeOidcSignIn: Handler<'completeOidcSignIn'> = async ({ body, request }) => {
    const outcome = await oidcSignIn.complete(body, request);
    if ('challenge' in outcome) return { status: 202, body: { second_factor: outcome.challenge }, headers: NO_STORE_TOKENS };
    return { status: 201, body: outcome.tokens, headers: NO_STORE_TOKENS };
  };

  return {
    listIdentityProviders,
    getIdentityProvider,
    createIdentityProvider,
    updateIdentityProvider,
    deleteIdentityProvider,
    listFournisseursIdentite: listIdentityProviders,
    getFournisseurIdentite: getIdentityProvider,
    createFournisseurIdentite: createIdentityProvider,
    updateFournisseurIdentite: updateIdentityProvider,
    deleteFournisseurIdentite: deleteIdentityProvider,
    startOidcSignIn,
    completeOidcSignIn,
  };
}
