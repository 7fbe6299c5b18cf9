// An identity provider as the contract shows it: never its client secret, only that one is set.
import type { components } from '../../../generated/openapi.js';
import type { Provider } from './repository.js';

export type IdentityProviderResource = components['schemas']['IdentityProvider'];

export function presentIdentityProvider(provider: Provider, redirectUri: string): IdentityProviderResource {
  return {
    id: provider.id,
    name: provider.name,
    issuer: provider.issuer,
    client_id: provider.client_id,
    client_secret_set: true,
    domains: provider.domains,
    scopes: provider.scopes,
    groups_claim: provider.groups_claim,
    role_mappings: provider.role_mappings,
    create_unknown_people: provider.create_unknown_people,
    sso_required: provider.sso_required,
    second_factor_amr: provider.second_factor_amr,
    second_factor_acr: provider.second_factor_acr,
    redirect_uri: redirectUri,
    created_at: provider.created_at.toISOString(),
    updated_at: provider.updated_at.toISOString(),
  };
}
