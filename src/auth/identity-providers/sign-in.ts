// Signing in with a company's identity provider: OpenID Connect's Authorization Code
// flow with PKCE, state and nonce (openid-client, src/auth/identity-providers/oidc.ts), ending in a session of
// this service like a password's (src/auth/sessions). The rules, each refused with its own code and
// nothing written but the refusal's `sign_in_failed` event:
// - The flow (state, nonce, PKCE verifier) is kept in the database, taken out by the first
//   callback that names its state (good once, on any process), for OIDC_FLOW_TTL_S, and only by
//   the client that started it (the flow token answered at the start: a link carrying someone
//   else's code and state does not sign this browser in as them, RFC 9700 4.7).
// - Who the person is: the link of issuer and subject made at their first sign-in through this
//   provider (a link is its provider's, removed with it; the provider must still answer for the
//   account's e-mail domain). Without one,
//   the ID token's e-mail, only when `email_verified` is true and its domain is one the provider
//   answers for; a person already linked to another subject of the same issuer is not taken over
//   by a subject that now claims their e-mail. After linking, a changed e-mail at the provider
//   changes nothing here.
// - Roles from the groups claim through the provider's mapping (src/auth/identity-providers/provisioning.ts).
// - The provider's `amr`/`acr` counts as a second factor only where the administrator listed the
//   values; otherwise a person with a second factor here gets the usual challenge.
// - Throttled per client address by the password sign-in's throttle (src/auth/throttle/, `oidcThrottle`
//   below): each start and each callback is an attempt that counts until a callback from that
//   address succeeds; past OIDC_MAX_FLOWS_PER_IP in the window, 429 with Retry-After.
import { timingSafeEqual } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { IDToken } from 'openid-client';
import { DomainError, invalid, notFound, rateLimited, unauthenticated } from '../../errors.js';
import { lockLiveSession, markSteppedUp, sessionGone, STEP_UP_TTL_S } from '../sessions/step-up.js';
import { countStepUpRefusal, journalThrottled, stepUpRefusalGate, tooManyRefusals } from '../sessions/step-up-refusals.js';
import { livenessAt } from '../sessions/liveness.js';
import { recordSecondFactorEvent } from '../second-factors/events.js';
import { signInThrottle, throttledAddress } from '../throttle/sign-in-throttle.js';
import { keyringOf } from '../secrets/sealing-keys.js';
import { digestSecret, generateSecret } from '../secrets/secrets.js';
import { hasSecondFactor } from '../second-factor.js';
import type { AuditContext } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { recordSecurityEvent } from '../sessions/security-events.js';
import { EMAIL_UNIQUE_INDEX, emailKey, isEmailAddress } from '../../users/names.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { SignInOutcome, SignInService } from '../sessions/sign-in.js';
import { domainOf } from '../sessions/sso-required.js';
import { truncateUserAgent, type ClientInfo } from '../sessions/revocation.js';
import { openClientSecret } from './client-secret.js';
import { authorizationUrl, configurationOf, OidcRefusal, redeem } from './oidc.js';
import { isUuid } from './providers.js';
import { namesFrom, provisionPerson, setDirectoryRoles } from './provisioning.js';
import * as repo from './repository.js';

const FLOW_PREFIX = 'bof';
const raceLost = () => new Refusal('oidc_identity_conflict', 'Another sign-in of this person was linking them at the same moment; sign in again.');
/** The unique indexes two simultaneous first sign-ins of one person can meet (link, or the new account's e-mail). */
const RACE_INDEXES = ['identity_links_pkey', 'identity_links_user_issuer_key', EMAIL_UNIQUE_INDEX];

export type RefusalCode =
  | 'oidc_state_invalid'
  | 'oidc_code_rejected'
  | 'oidc_id_token_invalid'
  | 'oidc_provider_error'
  | 'oidc_email_unverified'
  | 'oidc_domain_not_allowed'
  | 'oidc_unknown_person'
  | 'oidc_identity_conflict'
  | 'oidc_account_disabled';

/** A refused sign-in: the problem's code, and who it was about when known (for the audit record). */
class Refusal extends DomainError {
  constructor(
    code: RefusalCode,
    detail: string,
    readonly userId: string | null = null,
  ) {
    super('unauthenticated', code, detail);
  }
}

const REFUSAL_OF: Record<OidcRefusal['reason'], RefusalCode> = {
  code_rejected: 'oidc_code_rejected',
  id_token_invalid: 'oidc_id_token_invalid',
  provider_error: 'oidc_provider_error',
};

/** What a sign-in writes, kept on the second-factor challenge until that step is proved. */
interface PendingSignIn {
  provider_id: string;
  issuer: string;
  subject: string;
  /** A new link of issuer and subject to the person; else the known link's last use is noted. */
  link: boolean;
  groups: string[];
}

export interface StartInput {
  email?: string;
  provider_id?: string;
}

export interface CallbackInput {
  state: string;
  code: string;
  iss?: string;
  flow_token: string;
}

export function oidcSignInService(deps: Dependencies, signIn: SignInService) {
  const { db, clock, config } = deps;
  const keys = keyringOf(config);
  const { redirectUri, flowTtlS } = config.oidc;

  async function relyingParty(provider: repo.Provider) {
    const rp = { issuer: provider.issuer, clientId: provider.client_id, clientSecret: openClientSecret(keys, provider) };
    return configurationOf(rp, provider.updated_at.toISOString(), config.oidc.issuers);
  }

  /**
   * The password sign-in's throttle (src/auth/throttle/sign-in-throttle.ts), counting OIDC flows per
   * client address: the count's key is a digest of the address itself (`flowsOf`), so the
   * pair (it, address) is the address's own count, limited to OIDC_MAX_FLOWS_PER_IP; the rows
   * also count toward the address's SIGN_IN_MAX_FAILURES_PER_IP, as any failed sign-in from it.
   * A completed sign-in clears its address's count (as a password sign-in clears its pair).
   */
  const oidcThrottle = signInThrottle(db, { ...config.signInThrottle, maxFailuresPerEmailAndIp: config.oidc.maxFlowsPerIp, accountSlowdownAfter: config.oidc.maxFlowsPerIp });
  // Not an e-mail's digest (emailDigest's are of `email:...`): a password sign-in with a chosen
  // e-mail such as `oidc-flows@<address>` cannot add to an address's count of OIDC flows.
  const flowsOf = (ip: string) => digestSecret(`oidc-flows:${throttledAddress(ip)}`);

  /** Begins an attempt (a start or a callback) from the client's address: 429, recorded, when over the limit. */
  async function beginAttempt(client: ClientInfo, step: 'start' | 'callback'): Promise<void> {
    const attempt = await oidcThrottle.beginUnder(flowsOf(client.ip), client.ip, clock.now());
    if (!attempt.locked) return;
    await recordSecurityEvent(db, {
      type: 'sign_in_throttled',
      at: clock.now(),
      userId: null,
      ip: client.ip,
      requestId: client.requestId,
      userAgent: truncateUserAgent(client.userAgent),
      details: { method: 'oidc', step, limit: attempt.limitedBy, retry_after: attempt.retryAfter },
    });
    deps.outcomes?.signIn('throttled');
    throw rateLimited(`Too many sign-ins with an identity provider from this address; try again in ${attempt.retryAfter} seconds.`, attempt.retryAfter);
  }

  /** A completed sign-in (a session, or the second step asked for): its address's count starts again. */
  async function clearAttempts(trx: Kysely<Database>, client: ClientInfo): Promise<void> {
    await trx.deleteFrom('sign_in_failures').where('email_digest', '=', flowsOf(client.ip)).where('ip_address', '=', throttledAddress(client.ip)).execute();
  }

  async function start(input: StartInput, client: ClientInfo) {
    const provider = input.email !== undefined ? await repo.findProviderByDomain(db, domainOf(input.email)) : input.provider_id !== undefined && isUuid(input.provider_id) ? await repo.findProvider(db, input.provider_id) : undefined;
    if (!provider) {
      throw notFound('identity_provider_not_found', input.email !== undefined ? "No identity provider answers for this e-mail's domain." : 'No identity provider has this id.');
    }
    // Counted once a flow is to be written: a domain no provider answers for writes nothing.
    await beginAttempt(client, 'start');
    let authorization;
    try {
      authorization = await authorizationUrl(await relyingParty(provider), { redirectUri, scopes: provider.scopes, loginHint: input.email });
    } catch {
      throw unauthenticated('oidc_provider_error', 'The identity provider could not be reached.');
    }
    const flowToken = generateSecret(FLOW_PREFIX);
    const now = clock.now();
    await repo.insertFlow(db, {
      stateDigest: digestSecret(authorization.state),
      flowDigest: digestSecret(flowToken),
      providerId: provider.id,
      codeVerifier: authorization.codeVerifier,
      nonce: authorization.nonce,
      redirectUri,
      now,
      expiresAt: new Date(now.getTime() + flowTtlS * 1000),
    });
    return { authorization_url: authorization.url.href, flow_token: flowToken, expires_in: flowTtlS, provider: { id: provider.id, name: provider.name } };
  }

  async function complete(input: CallbackInput, client: ClientInfo): Promise<SignInOutcome> {
    let providerId: string | null = null;
    // Before the flow is taken: a throttled callback leaves the flow for a later one.
    await beginAttempt(client, 'callback');
    try {
      // Taken out first, whatever comes next: a state is good once.
      const flow = await repo.takeFlow(db, digestSecret(input.state));
      // A step-up's flow (src/auth/identity-providers/step-up.ts) signs nobody in.
      if (!flow || flow.step_up_session_id !== null || flow.expires_at <= clock.now() || !sameDigest(flow.flow_digest, digestSecret(input.flow_token))) {
        throw new Refusal('oidc_state_invalid', 'This sign-in is unknown, expired, already used or was started by another client; start again.');
      }
      providerId = flow.provider_id;
      const provider = await repo.findProvider(db, flow.provider_id);
      if (!provider) throw new Refusal('oidc_state_invalid', 'The identity provider of this sign-in was removed; start again.');
      let claims: IDToken;
      try {
        claims = await redeem(await relyingParty(provider), { redirectUri: flow.redirect_uri, code: input.code, state: input.state, iss: input.iss }, { codeVerifier: flow.code_verifier, nonce: flow.nonce });
      } catch (err) {
        if (err instanceof OidcRefusal) throw new Refusal(REFUSAL_OF[err.reason], err.message);
        throw err;
      }
      try {
        return await db.transaction().execute(async (trx) => {
          const outcome = await signInWith(trx, provider, claims, client);
          await clearAttempts(trx, client);
          return outcome;
        });
      } catch (err) {
        // Two first sign-ins of the same person at once both pass the look-ups; the unique
        // indexes decide (src/db/unique-violation.ts): the loser's transaction is rolled back and
        // it is refused as the link conflict it is. Signing in again goes through the link.
        if (RACE_INDEXES.some((index) => isUniqueViolation(err, index))) throw raceLost();
        throw err;
      }
    } catch (err) {
      if (err instanceof Refusal) {
        await recordSecurityEvent(db, {
          type: 'sign_in_failed',
          at: clock.now(),
          userId: err.userId,
          ip: client.ip,
          requestId: client.requestId,
          userAgent: truncateUserAgent(client.userAgent),
          details: { method: 'oidc', reason: err.code, ...(providerId ? { provider_id: providerId } : {}) },
        });
        deps.outcomes?.signIn('failed');
      }
      throw err;
    }
  }

  /** Everything the verified ID token leads to, in one transaction: link or create, roles, the session. */
  async function signInWith(trx: Kysely<Database>, provider: repo.Provider, claims: IDToken, client: ClientInfo): Promise<SignInOutcome> {
    const now = clock.now();
    const source = { kind: 'oidc' as const, providerId: provider.id };
    const issuer = claims.iss;
    const subject = claims.sub;

    let userId: string;
    let newLink = false;
    const link = await repo.findLink(trx, provider.id, issuer, subject);
    if (link) {
      userId = link.user_id;
      // The provider answers for the account's domain still: taking a domain off a provider
      // stops its people already linked, as deleting the provider removes its links.
      const account = await trx.selectFrom('users').select('email').where('id', '=', userId).executeTakeFirstOrThrow();
      if (!provider.domains.includes(domainOf(account.email))) {
        throw new Refusal('oidc_domain_not_allowed', `This identity provider does not answer for ${domainOf(account.email)}.`, userId);
      }
    } else {
      const email = typeof claims.email === 'string' ? claims.email.trim() : '';
      // An address the contract would not take (src/users/names.ts) is not one to link or create.
      if (claims.email_verified !== true || !isEmailAddress(email)) {
        throw new Refusal('oidc_email_unverified', 'The identity provider does not say this is a verified e-mail address; it cannot be linked to an account.');
      }
      if (!provider.domains.includes(domainOf(email))) {
        throw new Refusal('oidc_domain_not_allowed', `This identity provider does not answer for ${domainOf(email)}.`);
      }
      const existing = await trx.selectFrom('users').select('id').where('email_key', '=', emailKey(email)).executeTakeFirst();
      if (existing) {
        // Linked to another subject of this issuer already: someone else now claims the e-mail.
        if (await repo.findLinkOfUser(trx, existing.id, issuer)) {
          throw new Refusal('oidc_identity_conflict', 'The account of this e-mail address is linked to another person of this identity provider.', existing.id);
        }
        userId = existing.id;
      } else {
        if (!provider.create_unknown_people) throw new Refusal('oidc_unknown_person', 'Nobody here has this e-mail address, and this identity provider does not create accounts.');
        const { firstName, lastName } = namesFrom({ given_name: claims.given_name, family_name: claims.family_name, name: claims.name }, email);
        userId = await provisionPerson(trx, { email, firstName, lastName }, source, contextOfUser(client), now);
      }
      newLink = true;
    }

    const user = await trx
      .selectFrom('users')
      .select(['id', 'email', 'status', hasSecondFactor('users.id').as('has_second_factor')])
      .where('id', '=', userId)
      .forUpdate()
      .executeTakeFirstOrThrow();
    if (user.status !== 'active') throw new Refusal('oidc_account_disabled', 'This account is disabled.', user.id);

    const pending: PendingSignIn = { provider_id: provider.id, issuer, subject, link: newLink, groups: groupsIn(claims[provider.groups_claim]) };
    // The provider's amr/acr stands in for a second factor only on a link already made. A person
    // who holds their own factor proves it at the sign-in that links them (explicit linking): a
    // provider added for their domain is not who they enrolled that factor with, and one whose
    // claims are the attacker's would otherwise sign in as them, administrators included.
    const vouched = providerVouchesSecondFactor(provider, claims) && !(newLink && user.has_second_factor);
    if (user.has_second_factor && !vouched) {
      // Nothing of the provider's is written before the second factor is proved: a subject that
      // never passes it takes no link and sets no role (written by writePending on that step).
      return signIn.afterProvider(trx, { id: user.id, email: user.email, has_second_factor: true }, client, false, pending);
    }
    if (!(await writePending(trx, user.id, pending, now, client))) throw raceLost();
    return signIn.afterProvider(trx, { id: user.id, email: user.email, has_second_factor: user.has_second_factor }, client, vouched);
  }

  /** Who acts in the sign-in's audit records: the person signing in, on their own account. */
  function contextOfUser(client: ClientInfo) {
    const origin = { requestId: client.requestId ?? null, ip: client.ip, userAgent: truncateUserAgent(client.userAgent) };
    return (userId: string): AuditContext => ({ actor: { type: 'user', userId, sessionId: null }, ...origin });
  }

  /**
   * Writes what a verified sign-in leads to: the new link (or the known link's last use) and the
   * roles of the groups claim. The person's row is locked by the caller. At a second step, the
   * provider or the link's place may have gone meanwhile: then nothing of it is written.
   */
  async function writePending(trx: Kysely<Database>, userId: string, pending: PendingSignIn, now: Date, client: ClientInfo): Promise<boolean> {
    const provider = await repo.findProvider(trx, pending.provider_id);
    if (!provider) return false;
    const contextOf = contextOfUser(client);
    if (pending.link) {
      if (!(await repo.insertLink(trx, { issuer: pending.issuer, subject: pending.subject, userId, providerId: provider.id, now }))) return false;
      await recordAuditEvent(trx, {
        type: 'identity_linked',
        at: now,
        context: contextOf(userId),
        target: { type: 'user', id: userId },
        userId,
        details: { provider_id: provider.id, issuer: pending.issuer },
      });
    } else {
      await repo.touchLink(trx, pending.issuer, pending.subject, now);
    }
    const mappings = await repo.mappingsOf(trx, provider.id);
    if (mappings.length > 0) {
      const groups = new Set(pending.groups);
      const mapped = new Set(mappings.map((m) => m.role_id));
      const granted = new Set(mappings.filter((m) => groups.has(m.group_name)).map((m) => m.role_id));
      await setDirectoryRoles(trx, userId, { mapped, granted }, { kind: 'oidc', providerId: provider.id }, contextOf(userId), now);
    }
    return true;
  }

  // The second factor proved: what the provider's sign-in left pending is written (or nothing,
  // when its provider or its link's place has gone meanwhile; the person proved both factors).
  signIn.onPendingOidc(async (trx, userId, pending, now, client) => {
    await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
    await writePending(trx, userId, pending as PendingSignIn, now, client);
  });

  /**
   * Step-up at the provider (docs/IDENTITY.md, "Step-up at the provider"), for a person linked to
   * one: a flow like a sign-in's, bound to the session (`step_up_session_id`), whose authorization
   * URL asks the provider for a new login (`prompt=login`, `max_age=0`), as Auth0 and Keycloak do.
   */
  async function startStepUp(me: { userId: string; sessionId: string }, _client: ClientInfo) {
    const [link] = await repo.linksOfUser(db, me.userId);
    const provider = link && (await repo.findProvider(db, link.provider_id));
    if (!provider) throw notFound('identity_provider_not_found', 'You are linked to no identity provider.');
    const account = await db.selectFrom('users').select('email').where('id', '=', me.userId).executeTakeFirstOrThrow();
    let authorization;
    try {
      authorization = await authorizationUrl(await relyingParty(provider), { redirectUri, scopes: provider.scopes, loginHint: account.email, reauthenticate: true });
    } catch {
      throw invalid('oidc_provider_error', 'The identity provider could not be reached.');
    }
    const flowToken = generateSecret(FLOW_PREFIX);
    const now = clock.now();
    const flow = {
      stateDigest: digestSecret(authorization.state),
      flowDigest: digestSecret(flowToken),
      providerId: provider.id,
      codeVerifier: authorization.codeVerifier,
      nonce: authorization.nonce,
      redirectUri,
      now,
      expiresAt: new Date(now.getTime() + flowTtlS * 1000),
      stepUpSessionId: me.sessionId,
    };
    // Counted per session, not against the address's OIDC_MAX_FLOWS_PER_IP: strangers starting
    // sign-ins from the office's address do not block anyone's step-up.
    if (!(await db.transaction().execute((trx) => repo.insertStepUpFlowWithin(trx, flow, MAX_LIVE_STEP_UP_FLOWS_PER_SESSION)))) {
      throw rateLimited(`Too many step-ups at the identity provider begun on this session; try again in ${flowTtlS} seconds.`, flowTtlS);
    }
    return { authorization_url: authorization.url.href, flow_token: flowToken, expires_in: flowTtlS, provider: { id: provider.id, name: provider.name } };
  }

  /**
   * The proof: the flow is this session's, the ID token verified as at sign-in, its `auth_time`
   * fresh (the person logged in just now, STEP_UP_MAX_AUTH_AGE_S) and its subject the one this
   * person is linked to at that provider. A refusal counts against the session's budget of
   * refused step-ups (src/auth/sessions/step-up-refusals.ts), as a wrong code does: not the address's
   * limits, which strangers behind the office's address could fill.
   */
  async function completeStepUp(me: { userId: string; sessionId: string }, input: CallbackInput, client: ClientInfo) {
    const gate = await db.transaction().execute(async (trx) => {
      const asked = await stepUpRefusalGate(trx, me.sessionId, clock.now());
      if (asked.locked) await journalThrottled(trx, me, asked, clock.now(), client);
      return asked;
    });
    if (gate.locked) throw tooManyRefusals(gate.retryAfter);
    const refuse = async (code: string, detail: string): Promise<never> => {
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
          details: { method: 'oidc', during: 'step_up', reason: code },
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
    let claims: IDToken;
    try {
      claims = await redeem(await relyingParty(provider), { redirectUri: flow.redirect_uri, code: input.code, state: input.state, iss: input.iss }, { codeVerifier: flow.code_verifier, nonce: flow.nonce });
    } catch (err) {
      if (err instanceof OidcRefusal) return refuse(REFUSAL_OF[err.reason], err.message);
      throw err;
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

  return { start, complete, startStepUp, completeStepUp };
}

/**
 * What a person may step up with (the `step_up_methods` of a refusal): their second factors; a
 * person without one, the password when they have one, and `oidc` when linked to a provider (a
 * person who signs in only through a provider has no password to give).
 */
export function withOidcStepUp(db: Kysely<Database>, factorsOf: (userId: string) => Promise<string[]>) {
  return async (userId: string): Promise<string[]> => {
    const factors = await factorsOf(userId);
    if (factors.length > 0) return factors;
    const row = await db
      .selectFrom('users as u')
      .select([sql<boolean>`u.password_hash is not null`.as('has_password'), sql<boolean>`exists (select 1 from identity_links l where l.user_id = u.id)`.as('linked')])
      .where('u.id', '=', userId)
      .executeTakeFirst();
    return [...(row?.has_password !== false ? ['password'] : []), ...(row?.linked ? ['oidc'] : [])];
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

/** A groups claim: a list of strings (or one string); anything else is no group. */
function groupsIn(claim: unknown): string[] {
  if (typeof claim === 'string') return [claim];
  return Array.isArray(claim) ? claim.filter((g): g is string => typeof g === 'string') : [];
}

function providerVouchesSecondFactor(provider: repo.Provider, claims: IDToken): boolean {
  const amr = Array.isArray(claims.amr) ? claims.amr : [];
  if (amr.some((value) => typeof value === 'string' && provider.second_factor_amr.includes(value))) return true;
  return typeof claims.acr === 'string' && provider.second_factor_acr.includes(claims.acr);
}

function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

export type OidcSignInService = ReturnType<typeof oidcSignInService>;
