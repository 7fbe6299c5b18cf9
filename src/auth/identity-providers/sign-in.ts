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
// - Throttled per client address by the password sign-in's throttle (src/auth/throttle/, `throttle`
//   below): each start and each callback is an attempt that counts until a callback from that
//   address succeeds; past OIDC_MAX_FLOWS_PER_IP in the window, 429 with Retry-After.
import { type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { IDToken } from 'openid-client';
import { DomainError, notFound, rateLimited, unauthenticated } from '../../errors.js';
import { signInThrottle, throttledAddress } from '../throttle/sign-in-throttle.js';
import { digestSecret } from '../secrets/secrets.js';
import { hasSecondFactor } from '../second-factor.js';
import type { AuditContext } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { recordSecurityEvent } from '../sessions/security-events.js';
import { EMAIL_UNIQUE_INDEX, emailKey, isEmailAddress } from '../../users/names.js';
import { isUniqueViolation } from '../../db/unique-violation.js';
import type { SignInOutcome, SignInService } from '../sessions/sign-in.js';
import { domainOf } from '../sessions/sso-required.js';
import { truncateUserAgent, type ClientInfo } from '../sessions/revocation.js';
import { logProviderFailure, newFlow, REFUSAL_OF, relyingParties, sameDigest, type CallbackInput } from './flows.js';
import { authorizationUrl, OidcRefusal, redeem } from './oidc.js';
import { isUuid } from './providers.js';
import { namesFrom, provisionPerson, setDirectoryRoles } from './provisioning.js';
import * as repo from './repository.js';
import { lockRoleIds } from '../../roles/repository.js';

export type { CallbackInput };

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

// Not an e-mail's digest (emailDigest's are of `email:...`): a password sign-in with a chosen
// e-mail such as `oidc-flows@<address>` cannot add to an address's count of OIDC flows.
const flowsOf = (ip: string) => digestSecret(`oidc-flows:${throttledAddress(ip)}`);

/**
 * The provider's mappings, their roles locked FOR SHARE (id order) until the transaction ends, read
 * again once locked: a role deleted meanwhile (its mappings go with it) is not granted, and none is
 * deleted before the grant writes over it. The person's row must be locked first (docs/AUTH.md).
 */
async function lockedMappingsOf(db: Kysely<Database>, providerId: string): Promise<{ group_name: string; role_id: string }[]> {
  const locked = new Set<string>();
  for (;;) {
    const mappings = await repo.mappingsOf(db, providerId);
    const more = [...new Set(mappings.map((m) => m.role_id))].filter((id) => !locked.has(id)).sort();
    if (more.length === 0) return mappings;
    await lockRoleIds(db, more);
    for (const id of more) locked.add(id);
  }
}

export class OidcSignInService {
  private readonly relyingParty: ReturnType<typeof relyingParties>;
  /**
   * The password sign-in's throttle (src/auth/throttle/sign-in-throttle.ts), counting OIDC flows per
   * client address: the count's key is a digest of the address itself (`flowsOf`), so the
   * pair (it, address) is the address's own count, limited to OIDC_MAX_FLOWS_PER_IP; the rows
   * also count toward the address's SIGN_IN_MAX_FAILURES_PER_IP, as any failed sign-in from it.
   * A completed sign-in clears its address's count (as a password sign-in clears its pair).
   */
  private readonly throttle: ReturnType<typeof signInThrottle>;

  constructor(
    private readonly deps: Dependencies,
    private readonly signIn: SignInService,
  ) {
    const { db, config } = deps;
    this.relyingParty = relyingParties(config);
    this.throttle = signInThrottle(db, { ...config.signInThrottle, maxFailuresPerEmailAndIp: config.oidc.maxFlowsPerIp, accountSlowdownAfter: config.oidc.maxFlowsPerIp });
    // The second factor proved: what the provider's sign-in left pending is written (or nothing,
    // when its provider or its link's place has gone meanwhile; the person proved both factors).
    signIn.onPendingOidc(async (trx, userId, pending, now, client) => {
      await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
      await this.writePending(trx, userId, pending as PendingSignIn, now, client);
    });
  }

  async start(input: StartInput, client: ClientInfo) {
    const { db, clock, config } = this.deps;
    const { redirectUri, flowTtlS } = config.oidc;
    const provider = input.email !== undefined ? await repo.findProviderByDomain(db, domainOf(input.email)) : input.provider_id !== undefined && isUuid(input.provider_id) ? await repo.findProvider(db, input.provider_id) : undefined;
    if (!provider) {
      throw notFound('identity_provider_not_found', input.email !== undefined ? "No identity provider answers for this e-mail's domain." : 'No identity provider has this id.');
    }
    // Counted once a flow is to be written: a domain no provider answers for writes nothing.
    await this.beginAttempt(client, 'start');
    let authorization;
    try {
      authorization = await authorizationUrl(await this.relyingParty(provider), { redirectUri, scopes: provider.scopes, loginHint: input.email });
    } catch (err) {
      // Only the provider's failures (relyingParties); anything else is a bug, a 500.
      if (!(err instanceof OidcRefusal)) throw err;
      logProviderFailure(this.deps.logger, provider, 'sign_in_start', err, client.requestId);
      throw unauthenticated('oidc_provider_error', 'The identity provider could not be reached.');
    }
    const flow = newFlow(authorization, provider, { redirectUri, flowTtlS, now: clock.now() });
    await repo.insertFlow(db, flow.row);
    return flow.answer;
  }

  async complete(input: CallbackInput, client: ClientInfo): Promise<SignInOutcome> {
    const { db, clock } = this.deps;
    let providerId: string | null = null;
    // Before the flow is taken: a throttled callback leaves the flow for a later one.
    await this.beginAttempt(client, 'callback');
    try {
      // Taken out first, whatever comes next: a state is good once.
      const flow = await repo.takeFlow(db, digestSecret(input.state));
      // A step-up's flow (provider-step-up.ts) signs nobody in.
      if (!flow || flow.step_up_session_id !== null || flow.expires_at <= clock.now() || !sameDigest(flow.flow_digest, digestSecret(input.flow_token))) {
        throw new Refusal('oidc_state_invalid', 'This sign-in is unknown, expired, already used or was started by another client; start again.');
      }
      providerId = flow.provider_id;
      const provider = await repo.findProvider(db, flow.provider_id);
      if (!provider) throw new Refusal('oidc_state_invalid', 'The identity provider of this sign-in was removed; start again.');
      let claims: IDToken;
      try {
        // The configuration too may have to be read again here (another process, or past its
        // time kept): a provider down then, or one this service may not call, is refused as at the start.
        claims = await redeem(await this.relyingParty(provider), { redirectUri: flow.redirect_uri, code: input.code, state: input.state, iss: input.iss }, { codeVerifier: flow.code_verifier, nonce: flow.nonce });
      } catch (err) {
        if (!(err instanceof OidcRefusal)) throw err;
        if (err.reason === 'provider_error') logProviderFailure(this.deps.logger, provider, 'sign_in_callback', err, client.requestId);
        throw new Refusal(REFUSAL_OF[err.reason], err.message);
      }
      try {
        return await db.transaction().execute(async (trx) => {
          const outcome = await this.signInWith(trx, provider, claims, client);
          await this.clearAttempts(trx, client);
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
        this.deps.outcomes?.signIn('failed');
      }
      throw err;
    }
  }

  /** Everything the verified ID token leads to, in one transaction: link or create, roles, the session. */
  private async signInWith(trx: Kysely<Database>, provider: repo.Provider, claims: IDToken, client: ClientInfo): Promise<SignInOutcome> {
    const now = this.deps.clock.now();
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
        userId = await provisionPerson(trx, { email, firstName, lastName }, source, this.contextOfUser(client), now);
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
      return this.signIn.afterProvider(trx, { id: user.id, email: user.email, has_second_factor: true }, client, false, pending);
    }
    if (!(await this.writePending(trx, user.id, pending, now, client))) throw raceLost();
    return this.signIn.afterProvider(trx, { id: user.id, email: user.email, has_second_factor: user.has_second_factor }, client, vouched);
  }

  /** Who acts in the sign-in's audit records: the person signing in, on their own account. */
  private contextOfUser(client: ClientInfo) {
    const origin = { requestId: client.requestId ?? null, ip: client.ip, userAgent: truncateUserAgent(client.userAgent) };
    return (userId: string): AuditContext => ({ actor: { type: 'user', userId, sessionId: null }, ...origin });
  }

  /**
   * Writes what a verified sign-in leads to: the new link (or the known link's last use) and the
   * roles of the groups claim. The person's row is locked by the caller. At a second step, the
   * provider or the link's place may have gone meanwhile: then nothing of it is written.
   */
  private async writePending(trx: Kysely<Database>, userId: string, pending: PendingSignIn, now: Date, client: ClientInfo): Promise<boolean> {
    const provider = await repo.findProvider(trx, pending.provider_id);
    if (!provider) return false;
    const contextOf = this.contextOfUser(client);
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
    const mappings = await lockedMappingsOf(trx, provider.id);
    if (mappings.length > 0) {
      const groups = new Set(pending.groups);
      const mapped = new Set(mappings.map((m) => m.role_id));
      const granted = new Set(mappings.filter((m) => groups.has(m.group_name)).map((m) => m.role_id));
      await setDirectoryRoles(trx, userId, { mapped, granted }, { kind: 'oidc', providerId: provider.id }, contextOf(userId), now);
    }
    return true;
  }
  /** Begins an attempt (a start or a callback) from the client's address: 429, recorded, when over the limit. */
  private async beginAttempt(client: ClientInfo, step: 'start' | 'callback'): Promise<void> {
    const { db, clock } = this.deps;
    const attempt = await this.throttle.beginUnder(flowsOf(client.ip), client.ip, clock.now());
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
    this.deps.outcomes?.signIn('throttled');
    throw rateLimited(`Too many sign-ins with an identity provider from this address; try again in ${attempt.retryAfter} seconds.`, attempt.retryAfter);
  }

  /** A completed sign-in (a session, or the second step asked for): its address's count starts again. */
  private async clearAttempts(trx: Kysely<Database>, client: ClientInfo): Promise<void> {
    await trx.deleteFrom('sign_in_failures').where('email_digest', '=', flowsOf(client.ip)).where('ip_address', '=', throttledAddress(client.ip)).execute();
  }
}

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
