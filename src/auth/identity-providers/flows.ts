// What the sign-in and the step-up at an identity provider share: the relying party of a provider
// (openid-client's configuration, src/auth/identity-providers/oidc.ts), the flow token handed to
// the client that starts a flow, the refusals of the code exchange, and the callback's input.
import { timingSafeEqual } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { keyringOf } from '../secrets/sealing-keys.js';
import { openClientSecret } from './client-secret.js';
import { askingProvider, configurationOf, type Authorization, type OidcRefusal } from './oidc.js';
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

/**
 * The openid-client configuration of a provider, its client secret opened with the sealing keys.
 * Rejects with OidcRefusal `provider_error` when the provider cannot be reached or asked for it
 * (src/auth/identity-providers/oidc.ts, `providerCouldNotBeAsked`); anything else as it is.
 */
export function relyingParties(config: Config) {
  const keys = keyringOf(config);
  return (provider: repo.Provider) => {
    const rp = { issuer: provider.issuer, clientId: provider.client_id, clientSecret: openClientSecret(keys, provider) };
    return askingProvider(configurationOf(rp, provider.updated_at.toISOString(), config.oidc.issuers));
  };
}

/** Where a flow met a provider that could not be reached or asked. */
export type ProviderStep = 'sign_in_start' | 'sign_in_callback' | 'step_up_start' | 'step_up_callback';

/** The name, code and message of an error, nothing else of it (a cause may hold a provider's whole answer). */
function described(err: unknown): Record<string, string> | undefined {
  if (!(err instanceof Error)) return err === undefined ? undefined : { message: String(err) };
  const code = (err as { code?: unknown }).code;
  return { name: err.name, message: err.message, ...(typeof code === 'string' ? { code } : {}) };
}

/**
 * Logs a provider that could not be reached or asked (an operator's problem, answered to the
 * person as `oidc_provider_error`): which provider, where, and why, as the names and messages of
 * the failure and its cause. Never a secret: no client secret, state, code, nonce, verifier or
 * flow token is in these (the failure's own fields, which may hold the provider's answer, are not logged).
 */
export function logProviderFailure(logger: Logger, provider: Pick<repo.Provider, 'id' | 'issuer'>, step: ProviderStep, refusal: OidcRefusal, requestId?: string | null): void {
  const failure = refusal.cause;
  logger.warn(
    { provider_id: provider.id, issuer: provider.issuer, step, request_id: requestId ?? undefined, error: described(failure), cause: failure instanceof Error ? described(failure.cause) : undefined },
    'identity provider could not be reached',
  );
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
