// Step-up at the provider (docs/IDENTITY.md, "Step-up at the provider"), for a person linked to
// one: a flow like a sign-in's, bound to the session (`step_up_session_id`), whose authorization
// URL asks the provider for a new login (`prompt=login`, `max_age=0`), as Auth0 and Keycloak do.
import { sql, type Kysely } from 'kysely';
import type { IDToken } from 'openid-client';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { invalid, notFound, rateLimited } from '../../errors.js';
import { recordSecondFactorEvent } from '../second-factors/events.js';
import { digestSecret } from '../secrets/secrets.js';
import { livenessAt } from '../sessions/liveness.js';
import type { ClientInfo } from '../sessions/revocation.js';
import { truncateUserAgent } from '../sessions/revocation.js';
import { recordSecurityEvent } from '../sessions/security-events.js';
import { domainOf, ssoRequiredProvider } from '../sessions/sso-required.js';
import { lockLiveSession, markSteppedUp, sessionGone, STEP_UP_TTL_S } from '../sessions/step-up.js';
import { countStepUpRefusal, journalThrottled, stepUpRefusalGate, tooManyRefusals } from '../sessions/step-up-refusals.js';
import { logProviderFailure, newFlow, REFUSAL_OF, relyingParties, sameDigest, type CallbackInput } from './flows.js';
import { authorizationUrl, OidcRefusal, redeem } from './oidc.js';
import * as repo from './repository.js';

export class OidcStepUpService {
  private readonly relyingParty: ReturnType<typeof relyingParties>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config' | 'logger'>) {
    this.relyingParty = relyingParties(deps.config);
  }

  /**
   * Begins a step-up at the provider the person is linked to: the authorization URL and the flow
   * token. Only through a provider that still answers for the account's e-mail domain, as a sign-in
   * through it requires (src/auth/identity-providers/sign-in.ts): a provider the domain was taken
   * off vouches for nobody of it any more. Refused then `oidc_domain_not_allowed`, recorded as a
   * refused step-up (not counted against the session's budget of refused answers: a start is no answer).
   */
  async start(me: { userId: string; sessionId: string }, client: ClientInfo) {
    const { db, clock, config } = this.deps;
    const { redirectUri, flowTtlS } = config.oidc;
    const linked: repo.Provider[] = [];
    for (const link of await repo.linksOfUser(db, me.userId)) {
      const found = await repo.findProvider(db, link.provider_id);
      if (found) linked.push(found);
    }
    if (linked.length === 0) throw notFound('identity_provider_not_found', 'You are linked to no identity provider.');
    const account = await db.selectFrom('users').select('email').where('id', '=', me.userId).executeTakeFirstOrThrow();
    const domain = domainOf(account.email);
    // A domain is one provider's at most: the one linked provider that may answer, if any.
    const provider = linked.find((p) => p.domains.includes(domain));
    if (!provider) {
      await recordSecurityEvent(db, {
        type: 'sign_in_failed',
        at: clock.now(),
        userId: me.userId,
        ip: client.ip,
        requestId: client.requestId,
        userAgent: truncateUserAgent(client.userAgent),
        details: { method: 'oidc', during: 'step_up', step: 'start', reason: 'oidc_domain_not_allowed', provider_id: linked[0]!.id },
      });
      throw invalid('oidc_domain_not_allowed', `This identity provider does not answer for ${domain}.`);
    }
    let authorization;
    try {
      authorization = await authorizationUrl(await this.relyingParty(provider), { redirectUri, scopes: provider.scopes, loginHint: account.email, reauthenticate: true });
    } catch (err) {
      // Only the provider's failures (relyingParties); anything else is a bug, a 500.
      if (!(err instanceof OidcRefusal)) throw err;
      logProviderFailure(this.deps.logger, provider, 'step_up_start', err, client.requestId);
      throw invalid('oidc_provider_error', 'The identity provider could not be reached.');
    }
    const flow = newFlow(authorization, provider, { redirectUri, flowTtlS, now: clock.now() });
    // Counted per session, not against the address's OIDC_MAX_FLOWS_PER_IP: strangers starting
    // sign-ins from the office's address do not block anyone's step-up.
    if (!(await db.transaction().execute((trx) => repo.insertStepUpFlowWithin(trx, { ...flow.row, stepUpSessionId: me.sessionId }, MAX_LIVE_STEP_UP_FLOWS_PER_SESSION)))) {
      throw rateLimited(`Too many step-ups at the identity provider begun on this session; try again in ${flowTtlS} seconds.`, flowTtlS);
    }
    return flow.answer;
  }

  /**
   * The proof: the flow is this session's, the ID token verified as at sign-in, its `auth_time`
   * fresh (the person logged in just now, STEP_UP_MAX_AUTH_AGE_S) and its subject the one this
   * person is linked to at that provider, which still answers for the account's e-mail domain (as
   * at the start: the domain may have been taken off it since). A refusal counts against the session's budget of
   * refused step-ups (src/auth/sessions/step-up-refusals.ts), as a wrong code does: not the address's
   * limits, which strangers behind the office's address could fill.
   */
  async complete(me: { userId: string; sessionId: string }, input: CallbackInput, client: ClientInfo) {
    const { db, clock, config } = this.deps;
    const gate = await db.transaction().execute(async (trx) => {
      const asked = await stepUpRefusalGate(trx, me.sessionId, clock.now());
      if (asked.locked) await journalThrottled(trx, me, asked, clock.now(), client);
      return asked;
    });
    if (gate.locked) throw tooManyRefusals(gate.retryAfter);
    const refuse = async (code: string, detail: string, providerId?: string): Promise<never> => {
      const at = clock.now();
      await db.transaction().execute(async (trx) => {
        await countStepUpRefusal(trx, me.sessionId, at);
        await recordSecurityEvent(trx, {
          type: 'sign_in_failed',
          at,
          userId: me.userId,
          ip: client.ip,
          requestId: client.requestId,
          userAgent: truncateUserAgent(client.userAgent),
          details: { method: 'oidc', during: 'step_up', reason: code, ...(providerId ? { provider_id: providerId } : {}) },
        });
      });
      throw invalid(code, detail);
    };
    const flow = await repo.takeFlow(db, digestSecret(input.state));
    if (!flow || flow.step_up_session_id !== me.sessionId || flow.expires_at <= clock.now() || !sameDigest(flow.flow_digest, digestSecret(input.flow_token))) {
      return refuse('oidc_state_invalid', 'This step-up is unknown, expired, already used or was started by another session; start again.');
    }
    const provider = await repo.findProvider(db, flow.provider_id);
    if (!provider) return refuse('oidc_state_invalid', 'The identity provider of this step-up was removed; start again.');
    // Checked again on the provider as it is now, before it is asked anything: the domain may have
    // been taken off it since the start (a sign-in through it is refused so from then on).
    const account = await db.selectFrom('users').select('email').where('id', '=', me.userId).executeTakeFirstOrThrow();
    if (!provider.domains.includes(domainOf(account.email))) {
      return refuse('oidc_domain_not_allowed', `This identity provider does not answer for ${domainOf(account.email)}.`, provider.id);
    }
    let claims: IDToken;
    try {
      // The configuration too may have to be read again here (another process, or past its
      // time kept): a provider down then, or one this service may not call, is a refusal like the others.
      claims = await redeem(await this.relyingParty(provider), { redirectUri: flow.redirect_uri, code: input.code, state: input.state, iss: input.iss }, { codeVerifier: flow.code_verifier, nonce: flow.nonce });
    } catch (err) {
      if (!(err instanceof OidcRefusal)) throw err;
      if (err.reason === 'provider_error') logProviderFailure(this.deps.logger, provider, 'step_up_callback', err, client.requestId);
      return refuse(REFUSAL_OF[err.reason], err.message);
    }
    const now = clock.now();
    // `auth_time` is when the person last logged in at the provider: asked with max_age=0, a
    // provider that answers an old one (or none) reused its own session and proved nothing now.
    const authTime = typeof claims.auth_time === 'number' ? claims.auth_time * 1000 : undefined;
    if (authTime === undefined || now.getTime() - authTime > STEP_UP_MAX_AUTH_AGE_S * 1000) {
      return refuse('oidc_step_up_stale', 'The identity provider did not make you sign in again just now; start again.');
    }
    const link = await repo.findLink(db, provider.id, claims.iss, claims.sub);
    if (!link || link.user_id !== me.userId) {
      return refuse('oidc_step_up_other_subject', 'Someone else signed in at the identity provider; sign in there as yourself.');
    }
    await db.transaction().execute(async (trx) => {
      // A session revoked while the person was at the provider gets no proof (and nothing recorded).
      if (!(await lockLiveSession(trx, me.sessionId, livenessAt(now, config.sessions.idleTimeoutS)))) throw sessionGone();
      await markSteppedUp(trx, me.sessionId, 'oidc', now);
      await recordSecondFactorEvent(trx, 'session_stepped_up', {
        at: now,
        userId: me.userId,
        actor: { type: 'user', userId: me.userId, sessionId: me.sessionId },
        client,
        details: { method: 'oidc' },
      });
    });
    return { method: 'oidc' as const, valid_until: new Date(now.getTime() + STEP_UP_TTL_S * 1000).toISOString() };
  }
}

/**
 * What a person may step up with (the `step_up_methods` of a refusal): their second factors; a
 * person without one, the password when they have one, and `oidc` when linked to a provider that
 * still answers for their e-mail's domain (the step-up's own rule, `start`; a person who signs in
 * only through a provider has no password to give).
 */
export function withOidcStepUp(db: Kysely<Database>, factorsOf: (userId: string) => Promise<string[]>) {
  return async (userId: string): Promise<string[]> => {
    const factors = await factorsOf(userId);
    if (factors.length > 0) return factors;
    const row = await db.selectFrom('users').select(['email', sql<boolean>`password_hash is not null`.as('has_password')]).where('id', '=', userId).executeTakeFirst();
    const answering =
      row &&
      (await db
        .selectFrom('identity_links as l')
        .innerJoin('identity_provider_domains as d', 'd.provider_id', 'l.provider_id')
        .select('l.user_id')
        .where('l.user_id', '=', userId)
        .where('d.domain', '=', domainOf(row.email))
        .executeTakeFirst());
    // A password of a domain whose provider requires company sign-in proves nothing (step-up-proofs.ts).
    const password = row ? row.has_password && !(await ssoRequiredProvider(db, row.email)) : true;
    return [...(password ? ['password'] : []), ...(answering ? ['oidc'] : [])];
  };
}

/**
 * Live step-ups at the provider one session may have begun (flows not yet completed or expired):
 * a budget of its own, apart from the address's OIDC_MAX_FLOWS_PER_IP, as a passkey step-up's
 * challenges are (src/auth/second-factors/passkeys.ts). 10: a person retrying a few times within a flow's life.
 */
export const MAX_LIVE_STEP_UP_FLOWS_PER_SESSION = 10;

/** How old the provider's `auth_time` may be for a step-up: the login just made there, with room for the way back. */
export const STEP_UP_MAX_AUTH_AGE_S = 120;
