// The relying party, through `openid-client` (v6, Node 20): discovery, the authorization URL with
// PKCE (S256), state and nonce, and redeeming the code with every check of the ID token. Only glue:
// the library does the protocol. Two choices made here:
// - `enableNonRepudiationChecks`: openid-client v6 does not check the signature of an ID token it
//   got from the token endpoint over TLS (OpenID Connect Core 3.1.3.7 allows that); we check it
//   against the provider's published keys, so a token signed by any other key is refused.
// - Only `https` to public addresses, on every request (discovery, token, keys), unless
//   OIDC_ALLOW_INSECURE_ISSUERS (development and tests): src/auth/identity-providers/provider-network.ts.
// A provider's configuration (its discovery document and, inside openid-client, its keys) is kept
// in this process for DISCOVERY_KEEP_MS, keyed by the provider's row as last changed: it is the
// provider's published metadata, which every process reads the same, not state of ours.
import * as client from 'openid-client';
import { assertIssuerAllowed, IssuerRefusedError, ProviderRequestError, providerFetch, type IssuerPolicy } from './provider-network.js';

const DISCOVERY_KEEP_MS = 10 * 60_000;
const TIMEOUT_S = 10;

export interface RelyingParty {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** Why the provider's answer was refused; the sign-in maps each to its problem code. `cause`: what failed (for the log, never the answer). */
export class OidcRefusal extends Error {
  constructor(
    readonly reason: 'code_rejected' | 'id_token_invalid' | 'provider_error',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OidcRefusal';
  }
}

/**
 * Whether a failure to read the provider's configuration is the provider's: not reached (a
 * request that failed or was refused by the guarded fetch, a timeout), not to be called under this
 * service's policy (IssuerRefusedError: an issuer saved under OIDC_ALLOW_INSECURE_ISSUERS, a
 * service now running without it), or answering no usable discovery document (openid-client's
 * ClientError and the OAuth error answers). Anything else (a plain TypeError, say) is a bug of
 * ours and stays one: a 500, not a refusal.
 */
export function providerCouldNotBeAsked(err: unknown): boolean {
  return (
    err instanceof ProviderRequestError ||
    err instanceof IssuerRefusedError ||
    err instanceof client.ClientError ||
    err instanceof client.ResponseBodyError ||
    err instanceof client.WWWAuthenticateChallengeError ||
    (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))
  );
}

/** The configuration being read: a failure of the provider's (providerCouldNotBeAsked) becomes OidcRefusal `provider_error`, with it as the cause. */
export async function askingProvider(configuration: Promise<client.Configuration>): Promise<client.Configuration> {
  try {
    return await configuration;
  } catch (err) {
    if (providerCouldNotBeAsked(err)) throw new OidcRefusal('provider_error', 'The identity provider could not be reached.', { cause: err });
    throw err;
  }
}

const kept = new Map<string, { config: Promise<client.Configuration>; until: number }>();

/** The fetch of each policy: one per process, as the policy is the process's configuration. */
const fetches = new Map<boolean, client.CustomFetch>();
const fetchOf = (policy: IssuerPolicy) => fetches.get(policy.allowInsecure) ?? fetches.set(policy.allowInsecure, providerFetch(policy)).get(policy.allowInsecure)!;

/** The provider's configuration (discovery document read, issuer checked), kept a while. */
export function configurationOf(rp: RelyingParty, version: string, policy: IssuerPolicy): Promise<client.Configuration> {
  // The policy is part of the key: a configuration read under the development setting is never
  // handed to a service running without it (tests run both in one process).
  const key = `${rp.issuer}\n${rp.clientId}\n${version}\n${policy.allowInsecure}`;
  const now = Date.now();
  const hit = kept.get(key);
  if (hit && hit.until > now) return hit.config;
  const config = discover(rp, policy);
  kept.set(key, { config, until: now + DISCOVERY_KEEP_MS });
  config.catch(() => kept.delete(key));
  return config;
}

/**
 * Reads the discovery document now (creating or changing a provider): throws IssuerRefusedError
 * when the issuer may not be called (nothing is sent then), fails when unreachable or of another issuer.
 */
export async function discover(rp: RelyingParty, policy: IssuerPolicy): Promise<client.Configuration> {
  const issuer = new URL(rp.issuer);
  await assertIssuerAllowed(issuer, policy);
  // Without the development setting openid-client itself also refuses any `http` endpoint.
  const execute = policy.allowInsecure ? [client.allowInsecureRequests, client.enableNonRepudiationChecks] : [client.enableNonRepudiationChecks];
  return client.discovery(issuer, rp.clientId, undefined, client.ClientSecretBasic(rp.clientSecret), { execute, timeout: TIMEOUT_S, [client.customFetch]: fetchOf(policy) });
}

export interface Authorization {
  url: URL;
  codeVerifier: string;
  state: string;
  nonce: string;
}

/** `reauthenticate`: a new login at the provider, whatever session it holds (`prompt=login`, `max_age=0`: a step-up's). */
export async function authorizationUrl(config: client.Configuration, options: { redirectUri: string; scopes: string[]; loginHint?: string; reauthenticate?: boolean }): Promise<Authorization> {
  const codeVerifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const parameters: Record<string, string> = {
    redirect_uri: options.redirectUri,
    response_type: 'code',
    scope: options.scopes.join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  };
  if (options.loginHint) parameters.login_hint = options.loginHint;
  if (options.reauthenticate) Object.assign(parameters, { prompt: 'login', max_age: '0' });
  let url: URL;
  try {
    url = client.buildAuthorizationUrl(config, parameters);
  } catch (err) {
    // The provider's discovery document names no usable authorization endpoint: its failure.
    throw new OidcRefusal('provider_error', 'The identity provider names no usable authorization endpoint.', { cause: err });
  }
  return { url, codeVerifier, state, nonce };
}

export interface Callback {
  redirectUri: string;
  code: string;
  state: string;
  iss?: string;
}

/** Redeems the code and returns the verified ID token's claims; throws OidcRefusal. */
export async function redeem(config: client.Configuration, callback: Callback, checks: { codeVerifier: string; nonce: string }): Promise<client.IDToken> {
  const url = new URL(callback.redirectUri);
  url.searchParams.set('code', callback.code);
  url.searchParams.set('state', callback.state);
  if (callback.iss !== undefined) url.searchParams.set('iss', callback.iss);
  let claims: client.IDToken | undefined;
  try {
    const tokens = await client.authorizationCodeGrant(config, url, {
      pkceCodeVerifier: checks.codeVerifier,
      expectedState: callback.state,
      expectedNonce: checks.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (err) {
    throw refusalOf(err);
  }
  if (!claims) throw new OidcRefusal('id_token_invalid', 'The provider answered no ID token.');
  return claims;
}

function refusalOf(err: unknown): OidcRefusal {
  if (err instanceof client.ResponseBodyError) {
    // invalid_grant: a code used already, expired, or not of this flow's PKCE verifier.
    return new OidcRefusal('code_rejected', `The provider refused the code (${err.error}).`);
  }
  if (err instanceof client.AuthorizationResponseError) return new OidcRefusal('code_rejected', `The provider refused the sign-in (${err.error}).`);
  const message = err instanceof Error ? err.message : String(err);
  // fetch failures and timeouts: the provider could not be asked.
  if (err instanceof TypeError || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))) {
    return new OidcRefusal('provider_error', 'The identity provider could not be reached.', { cause: err });
  }
  return new OidcRefusal('id_token_invalid', `The provider's answer failed a check: ${message}`);
}
