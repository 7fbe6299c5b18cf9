// What the sign-in and the step-up at an identity provider share: the relying party of a provider
// (openid-client's configuration, src/auth/identity-providers/oidc.ts), the flow token handed to
// the client that starts a flow, the refusals of the code exchange, and the callback's input.
import { timingSafeEqual } from 'node:crypto';
import type { Config } from '../../config.js';
import { keyringOf } from '../secrets/sealing-keys.js';
import { openClientSecret } from './client-secret.js';
import { configurationOf, type Authorization, type OidcRefusal } from './oidc.js';
import type * as repo from './repository.js';
import { digestSecret, generateSecret } from '../secrets/secrets.js';

/** The prefix of a flow token (the secret the starting client keeps, digest-only in the database). */
export const FLOW_PREFIX = 'bof';

/** The problem code of each refusal of the code exchange. */
export const REFUSAL_OF: Record<OidcRefusal['reason'], 'oidc_code_rejected' | 'oidc_id_token_invalid' | 'oidc_provider_error'> = {
  code_rejected: 'oidc_code_rejected',
  id_token_invalid: 'oidc_id_token_invalid',
  provider_error: 'oidc_provider_error',
};

export interface CallbackInput {
  state: string;
  code: string;
  iss?: string;
  flow_token: string;
}

/** The openid-client configuration of a provider, its client secret opened with the sealing keys. */
export function relyingParties(config: Config) {
  const keys = keyringOf(config);
  return (provider: repo.Provider) => {
    const rp = { issuer: provider.issuer, clientId: provider.client_id, clientSecret: openClientSecret(keys, provider) };
    return configurationOf(rp, provider.updated_at.toISOString(), config.oidc.issuers);
  };
}

/**
 * A flow begun at `provider`: its row (only digests of the state and of the flow token are kept)
 * and the answer of the operation that began it (the flow token is in the answer only).
 */
export function newFlow(authorization: Authorization, provider: repo.Provider, options: { redirectUri: string; flowTtlS: number; now: Date }) {
  const flowToken = generateSecret(FLOW_PREFIX);
  const row = {
    stateDigest: digestSecret(authorization.state),
    flowDigest: digestSecret(flowToken),
    providerId: provider.id,
    codeVerifier: authorization.codeVerifier,
    nonce: authorization.nonce,
    redirectUri: options.redirectUri,
    now: options.now,
    expiresAt: new Date(options.now.getTime() + options.flowTtlS * 1000),
  };
  const answer = { authorization_url: authorization.url.href, flow_token: flowToken, expires_in: options.flowTtlS, provider: { id: provider.id, name: provider.name } };
  return { row, answer };
}

export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
