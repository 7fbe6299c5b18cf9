// Signing in, refreshing with rotation and reuse detection, listing and ending sessions, changing
// a password. Handlers call these; the rules (docs/AUTH.md) live here.
import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { AuthenticationMethod, Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { hashPassword, needsRehash, passwordPolicyViolation, verifyPassword } from '../secrets/passwords.js';
import { DomainError, invalid, rateLimited, refused, unauthenticated } from '../../errors.js';
import { recordSecurityEvent } from './security-events.js';
import { signInThrottle } from '../throttle/sign-in-throttle.js';
import { findCredentials, setPasswordHash } from '../../users/credentials.js';
import { assertMayActOn, isSelf, type Authority } from '../authority.js';
import { lockRolesOfUser } from '../../roles/repository.js';
import { lockUserForShare } from '../../users/repository.js';
import { permissionsOfRoles } from '../../roles/permissions.js';
import * as repo from './repository.js';
import { actorOf } from '../../audit/context.js';
import { livenessAt } from './liveness.js';
import { revokeSessions, truncateUserAgent, type ClientInfo } from './revocation.js';
import type { Actor } from '../../audit/events.js';
import { uncounted } from '../../outcomes.js';
import { secondFactorLocked, type SecondFactorAnswer, type SecondFactorService } from '../second-factors/service.js';
import { challengeOf, invalidPasskey, type AssertionVerdict, type PasskeyService, type WebAuthnJson } from '../second-factors/passkeys.js';
import { emailDigest, throttledAddress } from '../throttle/sign-in-throttle.js';
import { recordSecondFactorEvent } from '../second-factors/events.js';
import { countConfirmedFactors } from '../second-factors/repository.js';
import { lockLiveSession, markSteppedUp, sessionGone, STEP_UP_TTL_S } from './step-up.js';
import { countStepUpRefusal, journalThrottled, stepUpRefusalGate, tooManyRefusals } from './step-up-refusals.js';
import type { StepUpMethod } from '../../db/schema.js';
import { CHALLENGE_TTL_S, challengeFailed, challengeUsed, findLiveChallenge, lockLiveChallenge, openChallenge } from './challenges.js';
import { ssoRequiredProvider } from './sso-required.js';
import { forbidden } from '../../errors.js';
import { digestToken, isAccessToken, isRefreshToken, newTokenSet, sealTokenSet, unsealTokenSet, type TokenSet } from './tokens.js';

export type { ClientInfo };

/** Writes, on the second step's transaction, what a provider's sign-in left pending on its challenge. */
export type PendingOidcHandler = (trx: Kysely<Database>, userId: string, pending: unknown, now: Date, client: ClientInfo) => Promise<void>;

/** What the password step answers: the token set, or (for a person with a second factor) a challenge. */
export type SignInOutcome =
  | { tokens: TokenSet }
  | { challenge: { challenge_token: string; expires_in: number; methods: ('totp' | 'passkey' | 'recovery_code')[]; passkey_options?: WebAuthnJson } };

/** A second step's factor: a code (src/auth/second-factors/service.ts) or a passkey's answer to the challenge's passkey_options. */
export type SecondStepAnswer = SecondFactorAnswer | { passkey: unknown };

// An unknown e-mail still costs one full verification, against this hash of a random password, so
// that its answer takes as long as a wrong password's.
let dummyHash: Promise<string> | undefined;
const getDummyHash = () => (dummyHash ??= hashPassword(randomBytes(32).toString('base64')));

const invalidCredentials = () => unauthenticated('invalid_credentials', 'The e-mail address or the password is wrong.');

const tooManyAttempts = (retryAfter: number) =>
  rateLimited(`Too many failed password attempts; try again in ${retryAfter} seconds.`, retryAfter);

/** A proof offered at POST /sessions/current/step-up: a code, a passkey's answer, or the password. */
export type StepUpAnswer = SecondFactorAnswer | { passkey: unknown } | { password: string };

/** The signed-in person stepping up (src/auth/sessions/step-up.ts). */
export interface SteppingUp {
  userId: string;
  sessionId: string;
  email: string;
}

const invalidChallenge = () => unauthenticated('invalid_challenge', 'The sign-in challenge is unknown, expired or used up; sign in again.');
const wrongSecondFactor = () => unauthenticated('invalid_second_factor', 'The code is wrong or was already used.');

/** The second factors a sign-in checks, built once by the composition root (src/services.ts). */
export interface SignInFactors {
  secondFactors: SecondFactorService;
  passkeys: PasskeyService;
}

export function sessionService(deps: Dependencies, { secondFactors, passkeys }: SignInFactors) {
  const { db, clock, config, outcomes = uncounted } = deps;
  const throttle = signInThrottle(db, config.signInThrottle);
  const { lifetimeS, idleTimeoutS, refreshGraceS } = config.sessions;
  const liveness = (now: Date) => livenessAt(now, idleTimeoutS);

  /** Begins a sign-in attempt on `email` (password or second factor); refused, and recorded, while throttled. */
  async function beginAttempt(email: string, client: ClientInfo) {
    const attempt = await throttle.begin(email, client.ip, clock.now());
    if (attempt.locked) {
      await recordSecurityEvent(db, {
        type: 'sign_in_throttled',
        at: clock.now(),
        userId: attempt.account?.id ?? null,
        ip: client.ip,
        requestId: client.requestId,
        userAgent: truncateUserAgent(client.userAgent),
        details: { limit: attempt.limitedBy, retry_after: attempt.retryAfter },
      });
      outcomes.signIn('throttled');
      throw tooManyAttempts(attempt.retryAfter);
    }
    return attempt;
  }

  async function signIn(email: string, password: string, client: ClientInfo): Promise<SignInOutcome> {
    const userAgent = truncateUserAgent(client.userAgent);
    // Said of the domain, before any account is looked at: it tells nothing of who has one.
    const sso = await ssoRequiredProvider(db, email);
    if (sso) throw forbidden('sso_required', `People of ${email.slice(email.lastIndexOf('@') + 1)} sign in with ${sso.name}, not with a password.`);
    const attempt = await beginAttempt(email, client);
    const user = attempt.account;
    const passwordOk = user?.password_hash ? await verifyPassword(user.password_hash, password) : await verifyPassword(await getDummyHash(), password).then(() => false);
    if (!user || !passwordOk || user.status !== 'active') {
      // The attempt stays recorded: it is the failure the throttle counts.
      await recordSecurityEvent(db, {
        type: 'sign_in_failed',
        at: clock.now(),
        userId: user?.id ?? null,
        ip: client.ip,
        requestId: client.requestId,
        userAgent,
        details: { reason: !user ? 'unknown_email' : !passwordOk ? 'wrong_password' : 'account_disabled' },
      });
      outcomes.signIn('failed');
      throw invalidCredentials();
    }
    const now = clock.now();
    // The parameters changed since this hash was made: store one with today's.
    if (user.password_hash && needsRehash(user.password_hash)) await setPasswordHash(db, user.id, await hashPassword(password), now);
    // The password alone is not enough: the attempt keeps counting as a failure until the second
    // step succeeds, so a right password without a code buys no fresh guesses.
    if (user.has_second_factor) {
      // One query after the other: a request holds one connection at a time.
      const passkey = await passkeys.secondStepOptions(user.id);
      const codes = await secondFactors.methodsOf(user.id);
      const challenge_token = await openChallenge(db, user.id, now, passkey?.challenge ?? null);
      const methods = [...codes.filter((m) => m === 'totp'), ...(passkey ? (['passkey'] as const) : []), ...codes.filter((m) => m === 'recovery_code')];
      return { challenge: { challenge_token, expires_in: CHALLENGE_TTL_S, methods, ...(passkey ? { passkey_options: passkey.options } : {}) } };
    }
    return { tokens: await open(user.id, attempt, client, now, 'password') };
  }

  /**
   * After a sign-in at an identity provider (src/auth/identity-providers), in its transaction: the provider
   * vouched for the person. With a second factor here that the provider's own does not stand for,
   * a challenge (as after a password); else the session, whose method says how it was opened.
   */
  async function signInVerified(
    trx: Kysely<Database>,
    user: { id: string; email: string; has_second_factor: boolean },
    client: ClientInfo,
    providerSecondFactor: boolean,
    /** What the provider's sign-in writes once the second factor is proved (given to the pending handler). */
    pendingOidc: unknown = null,
  ): Promise<SignInOutcome> {
    const now = clock.now();
    if (user.has_second_factor && !providerSecondFactor) {
      // As after a password (signIn above), on the callback's transaction.
      const passkey = await passkeys.secondStepOptions(user.id, trx);
      const codes = await secondFactors.methodsOf(user.id, trx);
      const challenge_token = await openChallenge(trx, user.id, now, passkey?.challenge ?? null, 'oidc', pendingOidc);
      const methods = [...codes.filter((m) => m === 'totp'), ...(passkey ? (['passkey'] as const) : []), ...codes.filter((m) => m === 'recovery_code')];
      return { challenge: { challenge_token, expires_in: CHALLENGE_TTL_S, methods, ...(passkey ? { passkey_options: passkey.options } : {}) } };
    }
    const attempt = { emailDigest: emailDigest(user.email), countedAddress: throttledAddress(client.ip) };
    return { tokens: await open(user.id, attempt, client, now, providerSecondFactor ? 'oidc_provider_mfa' : 'oidc', trx) };
  }

  /** Opens a session for `userId`; the attempt's failures (its e-mail from its address) are forgotten in the same statement. */
  async function open(
    userId: string,
    attempt: { emailDigest: Buffer; countedAddress: string },
    client: ClientInfo,
    now: Date,
    method: AuthenticationMethod,
    on: Kysely<Database> = db,
  ): Promise<TokenSet> {
    const set = newTokenSet();
    await repo.openSession(on, {
      userId,
      ip: client.ip,
      userAgent: truncateUserAgent(client.userAgent),
      now,
      expiresAt: new Date(now.getTime() + lifetimeS * 1000),
      accessDigest: digestToken(set.access_token),
      refreshDigest: digestToken(set.refresh_token),
      emailDigest: attempt.emailDigest,
      countedAddress: attempt.countedAddress,
      requestId: client.requestId ?? null,
      method,
    });
    outcomes.signIn('succeeded');
    return set;
  }

  /**
   * The second step of a sign-in: the challenge of the password step and a second factor. A wrong
   * code counts against the same throttle as a wrong password (the person's e-mail from this
   * address), wears the challenge out, and is recorded as `second_factor_failed`.
   */
  /** Set by the identity provider sign-in (src/auth/identity-providers/sign-in.ts), which depends on this service. */
  let pendingOidcHandler: PendingOidcHandler | undefined;

  async function signInSecondFactor(challengeToken: string, answer: SecondStepAnswer, client: ClientInfo): Promise<TokenSet> {
    const challenge = await findLiveChallenge(db, challengeToken, clock.now());
    if (!challenge) throw invalidChallenge();
    const attempt = await beginAttempt(challenge.email, client);
    if (attempt.account?.status !== 'active') throw invalidChallenge();
    const now = clock.now();
    const method = await db.transaction().execute(async (trx) => {
      if (!(await lockLiveChallenge(trx, challenge.id, now))) return 'dead' as const;
      let proved: AuthenticationMethod | null;
      let refusal: AssertionVerdict | undefined;
      if ('passkey' in answer) {
        // The passkey must sign this sign-in's own WebAuthn challenge, so an answer is good once.
        refusal = challenge.passkey_challenge
          ? await passkeys.verifyAssertion(trx, answer.passkey, challenge.passkey_challenge, challenge.user_id)
          : { ok: false, reason: 'invalid_challenge' };
        if (refusal.ok) await passkeys.noteUse(trx, refusal, now);
        proved = refusal.ok ? 'password_passkey' : null;
      } else {
        const used = await secondFactors.useForSignIn(trx, challenge.user_id, answer, now, client);
        // Past the daily cap: refused without checking the code, and neither a guess nor a wrong answer.
        if (used === 'locked') return 'locked' as const;
        proved = used;
      }
      if (!proved) {
        await challengeFailed(trx, challenge.id);
        const details: Record<string, string> = 'passkey' in answer
          ? { method: 'passkey', during: 'sign_in', reason: refusal && !refusal.ok ? refusal.reason : 'not_verified', ...(refusal?.passkey ? { passkey_id: refusal.passkey.id } : {}) }
          : { method: 'totp_code' in answer ? 'totp' : 'recovery_code', during: 'sign_in' };
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: challenge.user_id, actor: { type: 'anonymous' }, client, details });
        return 'wrong' as const;
      }
      await challengeUsed(trx, challenge.id, now);
      if (challenge.pending_oidc !== null && pendingOidcHandler) await pendingOidcHandler(trx, challenge.user_id, challenge.pending_oidc, now, client);
      return proved;
    });
    if (method === 'dead') throw invalidChallenge();
    if (method === 'locked') throw secondFactorLocked();
    if (method === 'wrong') {
      outcomes.signIn('failed');
      throw wrongSecondFactor();
    }
    // After an identity provider, the method says so: oidc_totp rather than password_totp.
    const opened = challenge.first_factor === 'oidc' ? (method.replace(/^password_/, 'oidc_') as AuthenticationMethod) : method;
    return open(challenge.user_id, attempt, client, now, opened);
  }

  /** Begins a passwordless sign-in with a passkey: the options for the browser. */
  function startPasskeySignIn(client: ClientInfo) {
    return passkeys.startSignIn(client);
  }

  /**
   * Signs in with a passkey alone (a discoverable credential with user verification): the
   * browser's answer to a live challenge of startPasskeySignIn names its passkey, whose person
   * signs in. The challenge is used up whatever the verdict; every refusal answers the same
   * `401 invalid_passkey` and is recorded as `sign_in_failed` (the person concerned when the
   * passkey is known; `sso_required` for a person whose domain must sign in at its provider). The sign-in throttle is not asked: a signature cannot be guessed, and a
   * person whose password is under attack can still come in with their passkey.
   */
  async function signInWithPasskey(credential: unknown, client: ClientInfo): Promise<TokenSet> {
    const challenge = challengeOf(credential);
    const now = clock.now();
    const userAgent = truncateUserAgent(client.userAgent);
    const outcome = await db.transaction().execute(async (trx) => {
      const refuse = async (reason: string, userId: string | null) => {
        await recordSecurityEvent(trx, { type: 'sign_in_failed', at: now, userId, ip: client.ip, requestId: client.requestId, userAgent, details: { method: 'passkey', reason } });
        return undefined;
      };
      if (!challenge || !(await passkeys.takeChallenge(trx, challenge, 'sign_in', null, now))?.live) return refuse('invalid_challenge', null);
      const verdict = await passkeys.verifyAssertion(trx, credential, challenge, null);
      if (!verdict.ok) return refuse(verdict.reason, verdict.passkey?.user_id ?? null);
      const user = await trx.selectFrom('users').select(['id', 'email', 'status']).where('id', '=', verdict.passkey.user_id).executeTakeFirstOrThrow();
      if (user.status !== 'active') return refuse('account_disabled', user.id);
      // A domain whose provider requires company sign-in: a passkey made here before is no way
      // around it (whoever the provider removed must not keep coming in). Refused like any other.
      if (await ssoRequiredProvider(trx, user.email)) return refuse('sso_required', user.id);
      await passkeys.noteUse(trx, verdict, now);
      return user;
    });
    if (!outcome) {
      outcomes.signIn('failed');
      throw unauthenticated('invalid_passkey', 'The passkey could not be verified, or its challenge is unknown, expired or used; start again.');
    }
    return open(outcome.id, { emailDigest: emailDigest(outcome.email), countedAddress: throttledAddress(client.ip) }, client, now, 'passkey');
  }

  /**
   * A fresh proof for the current session (src/auth/sessions/step-up.ts): a second factor of a person
   * who has one, the password of a person who has none. A wrong password counts against the
   * sign-in throttle like a failed sign-in (a stolen token must not become a way to guess it). A
   * refused code or passkey answer counts against the session's own budget of refusals
   * (src/auth/sessions/step-up-refusals.ts), never the address's: strangers' failed sign-ins from the
   * office's address do not block anyone's step-up; a wrong authenticator-app code also counts
   * against the person's daily cap. Each counted refusal is recorded as `second_factor_failed`
   * during `step_up`; past the budget, `429` with nothing checked, recorded once per lock window.
   */
  async function stepUp(me: SteppingUp, answer: StepUpAnswer, client: ClientInfo): Promise<{ method: StepUpMethod; valid_until: string }> {
    if ('passkey' in answer) return stepUpWithPasskey(me, answer.passkey, client);
    const methods = await secondFactors.stepUpMethodsOf(me.userId);
    const hasFactor = (await countConfirmedFactors(db, me.userId)) > 0;
    if ('password' in answer && hasFactor) {
      throw new DomainError('invalid', 'step_up_needs_second_factor', 'You have a second factor: prove it is you with a code from it.', { step_up_methods: methods });
    }
    const actor: Actor = { type: 'user', userId: me.userId, sessionId: me.sessionId };
    if ('password' in answer) {
      const attempt = await beginAttempt(me.email, client);
      // Checked before any transaction: hashing must not hold a connection.
      const credentials = await findCredentials(db, me.userId);
      const right = credentials?.password_hash ? await verifyPassword(credentials.password_hash, answer.password) : false;
      const now = clock.now();
      // The attempt stays recorded as a failure when the answer was wrong.
      if (!right) throw new DomainError('invalid', 'invalid_current_password', 'The password is wrong.');
      await db.transaction().execute((trx) => proved(trx, me, 'password', now, client, actor));
      await throttle.succeeded(attempt.attemptId);
      return { method: 'password', valid_until: new Date(now.getTime() + STEP_UP_TTL_S * 1000).toISOString() };
    }
    const now = clock.now();
    const method = await db.transaction().execute(async (trx) => {
      const gate = await stepUpRefusalGate(trx, me.sessionId, now);
      if (gate.locked) return stepUpThrottled(trx, me, gate, now, client);
      const used = await secondFactors.useForSignIn(trx, me.userId, answer, now, client, 'step_up');
      const kind = 'totp_code' in answer ? 'totp' : 'recovery_code';
      if (used === 'locked') return 'locked' as const;
      if (!used) {
        await countStepUpRefusal(trx, me.sessionId, now);
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: me.userId, actor, client, details: { method: kind, during: 'step_up' } });
        return null;
      }
      await proved(trx, me, kind, now, client, actor);
      return kind;
    });
    if (typeof method === 'object' && method !== null) throw tooManyRefusals(method.retryAfter);
    if (method === 'locked') throw secondFactorLocked();
    if (!method) throw invalid('invalid_second_factor', 'The code is wrong or was already used.');
    return { method, valid_until: new Date(now.getTime() + STEP_UP_TTL_S * 1000).toISOString() };
  }

  /** A step-up refused unchecked, its session past its budget of refusals: journalled once per lock window. */
  async function stepUpThrottled(trx: Transaction<Database>, me: SteppingUp, gate: { retryAfter: number; first: boolean }, now: Date, client: ClientInfo) {
    await journalThrottled(trx, me, gate, now, client);
    return { retryAfter: gate.retryAfter };
  }

  /** Begins a step-up with a passkey: options for the browser, their challenge bound to this session. */
  function startPasskeyStepUp(me: SteppingUp, client: ClientInfo) {
    return passkeys.startStepUp(me, client);
  }

  /**
   * A step-up proved by a passkey: the browser's answer to a live challenge of startPasskeyStepUp
   * asked for by this very session, signed by one of this person's passkeys, checked as at sign-in
   * (user verification, signature, counter, backup flags). The challenge is used up whatever the
   * verdict; every refusal is the same `400 invalid_passkey`, recorded as `second_factor_failed`
   * (during `step_up`, with the reason) and counted against the session's budget of refused
   * step-ups, like a wrong code (src/auth/sessions/step-up-refusals.ts): a signature cannot be guessed,
   * but a thief holding a stolen access token could otherwise write a journal row per refused
   * answer (a made-up challenge costs nothing) as fast as they send them. Past the budget, `429`
   * with nothing checked.
   */
  async function stepUpWithPasskey(me: SteppingUp, credential: unknown, client: ClientInfo): Promise<{ method: StepUpMethod; valid_until: string }> {
    const challenge = challengeOf(credential);
    const now = clock.now();
    const actor: Actor = { type: 'user', userId: me.userId, sessionId: me.sessionId };
    const ok = await db.transaction().execute(async (trx) => {
      const gate = await stepUpRefusalGate(trx, me.sessionId, now);
      if (gate.locked) return stepUpThrottled(trx, me, gate, now, client);
      const refuse = async (reason: string, passkeyId?: string) => {
        await countStepUpRefusal(trx, me.sessionId, now);
        const details = { method: 'passkey', during: 'step_up', reason, ...(passkeyId ? { passkey_id: passkeyId } : {}) };
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: me.userId, actor, client, details });
        return false;
      };
      if (!challenge || !(await passkeys.takeChallenge(trx, challenge, 'step_up', me.userId, now, me.sessionId))?.live) return refuse('invalid_challenge');
      const verdict = await passkeys.verifyAssertion(trx, credential, challenge, me.userId);
      // Another person's passkey is not named in this person's journal.
      if (!verdict.ok) return refuse(verdict.reason, verdict.passkey?.user_id === me.userId ? verdict.passkey.id : undefined);
      await passkeys.noteUse(trx, verdict, now);
      await proved(trx, me, 'passkey', now, client, actor);
      return true;
    });
    if (typeof ok === 'object') throw tooManyRefusals(ok.retryAfter);
    if (!ok) throw invalidPasskey();
    return { method: 'passkey', valid_until: new Date(now.getTime() + STEP_UP_TTL_S * 1000).toISOString() };
  }

  /** The proof noted on the session, locked and checked live first (else 401, the transaction undone: nothing recorded). */
  async function proved(trx: Transaction<Database>, me: SteppingUp, method: StepUpMethod, now: Date, client: ClientInfo, actor: Actor) {
    if (!(await lockLiveSession(trx, me.sessionId, liveness(now)))) throw sessionGone();
    await markSteppedUp(trx, me.sessionId, method, now);
    await recordSecondFactorEvent(trx, 'session_stepped_up', { at: now, userId: me.userId, actor, client, details: { method } });
  }

  async function refresh(accessToken: string, refreshToken: string, client: ClientInfo): Promise<TokenSet> {
    if (!isAccessToken(accessToken)) throw refusedRefresh('invalid_token', 'The access token is malformed.');
    if (!isRefreshToken(refreshToken)) throw refusedRefresh('invalid_refresh_token', 'The refresh token is malformed.');
    const now = clock.now();
    // Made before the call, which stores it only if this caller is the one that rotates: the seal's
    // key comes from the refresh token, which the database never holds. One round trip.
    const set = newTokenSet();
    const [result] = await repo.refreshTokenSet.execute(db, {
      refreshDigest: digestToken(refreshToken),
      accessDigest: digestToken(accessToken),
      now,
      idleCutoff: liveness(now).idleCutoff,
      graceS: refreshGraceS,
      newAccessDigest: digestToken(set.access_token),
      newRefreshDigest: digestToken(set.refresh_token),
      successorSealed: sealTokenSet(set, refreshToken),
      ip: client.ip,
      userAgent: truncateUserAgent(client.userAgent),
      requestId: client.requestId ?? null,
    });
    switch (result!.outcome) {
      case 'issued':
        outcomes.refresh('issued');
        return set;
      case 'replayed':
        // Used up within the grace window: the very set the rotation gave (two tabs at once).
        outcomes.refresh('replayed');
        return unsealTokenSet(result!.successor_sealed!, refreshToken);
      case 'invalid_refresh_token':
        throw refusedRefresh('invalid_refresh_token', 'The refresh token is unknown.');
      case 'invalid_token':
        throw refusedRefresh('invalid_token', 'The access token does not belong to the session of the refresh token.');
      case 'session_ended':
        throw refusedRefresh('session_ended', 'The session was signed out or revoked.');
      case 'session_expired':
        throw refusedRefresh('session_expired', 'The session has expired; sign in again.');
      case 'reused':
        // Used up before the grace window: someone holds a copy. The session is revoked.
        outcomes.refresh('reused');
        throw refused('refresh_token_reused', 'This refresh token was already used; the session has been revoked.');
    }
  }

  /** A refresh refused for a bad or dead token (not a reuse), counted as such. */
  function refusedRefresh(code: string, message: string) {
    outcomes.refresh('refused');
    return refused(code, message);
  }

  async function listSessions(userId: string) {
    return repo.listLiveSessions(db, userId, liveness(clock.now()));
  }

  /** An administrator's view: undefined when no user has this id (not the same as no session). */
  async function listSessionsOfUser(userId: string) {
    const [exists, rows] = await Promise.all([repo.userExists(db, userId), repo.listLiveSessions(db, userId, liveness(clock.now()))]);
    return exists ? rows : undefined;
  }

  async function findSession(sessionId: string) {
    return repo.findLiveSession(db, sessionId, liveness(clock.now()));
  }

  /** Revokes one session (or all, without sessionId) of a user, in `trx`; false when there was none to revoke. */
  async function revokeIn(trx: Kysely<Database>, now: Date, userId: string, sessionId: string | undefined, client: ClientInfo, reason: string, actor?: Actor) {
    const revoked = await revokeSessions(trx, { userId, ...(sessionId ? { sessionId } : {}) }, reason, now, client, actor);
    return revoked.length > 0;
  }

  /** Revokes one session (or all, without sessionId) of a user; false when there was none to revoke. */
  async function revoke(userId: string, sessionId: string | undefined, client: ClientInfo, reason: string, actor?: Actor): Promise<boolean> {
    const now = clock.now();
    return db.transaction().execute((trx) => revokeIn(trx, now, userId, sessionId, client, reason, actor));
  }

  /**
   * Revokes one session (or all) of any user, as a manager: ending someone else's sessions needs
   * every permission they hold; one's own sessions may always be ended.
   */
  async function revokeUserSessions(authority: Authority, userId: string, sessionId: string | undefined, client: ClientInfo): Promise<boolean> {
    const self = isSelf(authority, userId);
    const now = clock.now();
    return db.transaction().execute(async (trx) => {
      if (!self) {
        // Judged in the revoking transaction, on the user and roles locked: a grant of wider rights
        // in progress is waited for, and none starts before the sessions are ended.
        if (!(await lockUserForShare(trx, userId))) return false;
        assertMayActOn(authority, permissionsOfRoles(await lockRolesOfUser(trx, userId)), 'This user');
      }
      return revokeIn(trx, now, userId, sessionId, client, self ? 'revoked_by_user' : 'revoked_by_administrator', actorOf(authority));
    });
  }

  async function signOut(userId: string, sessionId: string, client: ClientInfo): Promise<void> {
    const now = clock.now();
    await db.transaction().execute(async (trx) => {
      if (await repo.endSession(trx, sessionId, now)) {
        const userAgent = truncateUserAgent(client.userAgent);
        await recordSecurityEvent(trx, { type: 'session_revoked', at: now, userId, sessionId, ip: client.ip, requestId: client.requestId, userAgent, details: { reason: 'signed_out' } });
      }
    });
  }

  /** Checks the current password, applies the policy, sets the new one and revokes the user's other sessions. */
  async function changePassword(userId: string, sessionId: string, current: string, next: string, client: ClientInfo): Promise<void> {
    const violation = passwordPolicyViolation(next);
    if (violation) throw new DomainError('invalid', 'password_rejected', violation);
    // A wrong current password is a failed password guess like a failed sign-in: it counts, and is
    // refused while blocked, against the same limits (a stolen access token must not become a way
    // to guess the password).
    const credentials = await findCredentials(db, userId);
    if (!credentials) throw new DomainError('invalid', 'invalid_current_password', 'The current password is wrong.');
    const attempt = await throttle.begin(credentials.email, client.ip, clock.now());
    if (attempt.locked) throw tooManyAttempts(attempt.retryAfter);
    if (!credentials.password_hash || !(await verifyPassword(credentials.password_hash, current))) {
      throw new DomainError('invalid', 'invalid_current_password', 'The current password is wrong.');
    }
    await throttle.succeeded(attempt.attemptId);
    const newHash = await hashPassword(next);
    const now = clock.now();
    const userAgent = truncateUserAgent(client.userAgent);
    await db.transaction().execute(async (trx) => {
      // The person's row first, then the session: the order of every change that ends a person's
      // sessions (disabling, revoking them), or the two deadlock (test/review-attacks, "deadlocks").
      await setPasswordHash(trx, userId, newHash, now, { chosenByUser: true });
      // The change is a proof made on this session (below): a session revoked or signed out while
      // the hashing ran changes nothing (the throw rolls the new hash back), as a step-up's proof
      // does not (src/auth/sessions/step-up.ts).
      if (!(await lockLiveSession(trx, sessionId, liveness(now)))) throw sessionGone();
      // The other sessions' revocations are recorded first, then the change with their count.
      const revoked = await revokeSessions(trx, { userId, exceptSessionId: sessionId }, 'password_changed', now, client, { type: 'user', userId, sessionId });
      await recordSecurityEvent(trx, { type: 'password_changed', at: now, userId, sessionId, ip: client.ip, requestId: client.requestId, userAgent, details: { sessions_revoked: revoked.length } });
      // The current password was just checked: for a person without a second factor, that is the
      // proof a step-up would ask for (docs/AUTH.md, "Step-up"); a person with one keeps theirs.
      if ((await countConfirmedFactors(trx, userId)) === 0) await markSteppedUp(trx, sessionId, 'password', now);
    });
  }

  return {
    signIn,
    signInVerified,
    onPendingOidc: (handler: PendingOidcHandler) => {
      pendingOidcHandler = handler;
    },
    signInSecondFactor,
    startPasskeySignIn,
    signInWithPasskey,
    refresh,
    listSessions,
    listSessionsOfUser,
    userExists: (userId: string) => repo.userExists(db, userId),
    findSession,
    revoke,
    revokeUserSessions,
    signOut,
    changePassword,
    stepUp,
    startPasskeyStepUp,
  };
}

export type SessionService = ReturnType<typeof sessionService>;
