// Signing in: the password step, the second step (a code or a passkey), a passkey alone, and the
// sign-in an identity provider vouched for (src/auth/identity-providers). Each ends in `open`, the
// one place a session is made. The rules: docs/AUTH.md.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { AuthenticationMethod, Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { forbidden, unauthenticated } from '../../errors.js';
import { uncounted } from '../../outcomes.js';
import { rehashPassword, storedPasswordHash } from '../../users/credentials.js';
import { hashPassword, needsRehash, verifyPassword } from '../secrets/passwords.js';
import { emailDigest, throttledAddress } from '../throttle/sign-in-throttle.js';
import { secondFactorLocked, type SecondFactorAnswer } from '../second-factors/service.js';
import { challengeOf, type WebAuthnJson } from '../second-factors/passkeys.js';
import type { AssertionVerdict } from '../second-factors/passkey-assertions.js';
import { recordSecondFactorEvent } from '../second-factors/events.js';
import { CHALLENGE_TTL_S, challengeFailed, challengeUsed, findLiveChallenge, lockLiveChallenge, openChallenge } from './challenges.js';
import * as repo from './repository.js';
import { recordSecurityEvent } from './security-events.js';
import { truncateUserAgent, type ClientInfo } from './revocation.js';
import { sightDevice } from './devices.js';
import { keyringOf, type Keyring } from '../secrets/sealing-keys.js';
import { ssoRequiredProvider } from './sso-required.js';
import { digestToken, newTokenSet, type TokenSet } from './tokens.js';
import type { SignInAttempts } from './sign-in-attempts.js';
import type { SignInFactors } from './factors.js';

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
const invalidChallenge = () => unauthenticated('invalid_challenge', 'The sign-in challenge is unknown, expired or used up; sign in again.');
const wrongSecondFactor = () => unauthenticated('invalid_second_factor', 'The code is wrong or was already used.');

export class SignInService {
  /** Set by the identity provider sign-in (src/auth/identity-providers/sign-in.ts), which depends on this service. */
  private pendingOidcHandler: PendingOidcHandler | undefined;
  private readonly keys: Keyring;

  constructor(
    private readonly deps: Dependencies,
    private readonly factors: SignInFactors,
    private readonly attempts: SignInAttempts,
  ) {
    this.keys = keyringOf(deps.config);
  }

  private get outcomes() {
    return this.deps.outcomes ?? uncounted;
  }

  /** The password step: the token set, or a challenge for a person with a second factor. */
  async withPassword(email: string, password: string, client: ClientInfo): Promise<SignInOutcome> {
    const { db, clock } = this.deps;
    const userAgent = truncateUserAgent(client.userAgent);
    // Said of the domain, before any account is looked at: it tells nothing of who has one.
    const sso = await ssoRequiredProvider(db, email);
    if (sso) throw forbidden('sso_required', `People of ${email.slice(email.lastIndexOf('@') + 1)} sign in with ${sso.name}, not with a password.`);
    const attempt = await this.attempts.begin(email, client);
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
      this.outcomes.signIn('failed');
      throw invalidCredentials();
    }
    const now = clock.now();
    // The hash the password was verified against: the session (now, or after the second step)
    // opens only if the row still holds it (`open`), so a reset or change committed since wins.
    let verified = user.password_hash!;
    // The parameters changed since this hash was made: store one with today's, in place of the
    // verified one only. When the hash changed meanwhile, the password is checked against the hash
    // now stored: another sign-in's rehash of the same password passes, a reset's new hash does
    // not (the session is then refused, as a wrong password's).
    if (needsRehash(verified)) {
      const rehashed = await hashPassword(password);
      if (await rehashPassword(db, user.id, verified, rehashed, now)) verified = rehashed;
      else {
        const stored = await storedPasswordHash(db, user.id);
        if (stored && (await verifyPassword(stored, password))) verified = stored;
      }
    }
    // The password alone is not enough: the attempt keeps counting as a failure until the second
    // step succeeds, so a right password without a code buys no fresh guesses.
    const digest = repo.passwordDigest(verified);
    if (user.has_second_factor) return { challenge: await this.challenge(db, user.id, now, undefined, digest) };
    return { tokens: await this.open(user.id, attempt, client, now, 'password', { passwordDigest: digest }) };
  }

  /**
   * After a sign-in at an identity provider, in its transaction: the provider vouched for the
   * person. With a second factor here that the provider's own does not stand for, a challenge (as
   * after a password); else the session, whose method says how it was opened.
   */
  async afterProvider(
    trx: Kysely<Database>,
    user: { id: string; email: string; has_second_factor: boolean },
    client: ClientInfo,
    providerSecondFactor: boolean,
    /** What the provider's sign-in writes once the second factor is proved (given to the pending handler). */
    pendingOidc: unknown = null,
  ): Promise<SignInOutcome> {
    const now = this.deps.clock.now();
    if (user.has_second_factor && !providerSecondFactor) return { challenge: await this.challenge(trx, user.id, now, pendingOidc) };
    const attempt = { emailDigest: emailDigest(user.email), countedAddress: throttledAddress(client.ip) };
    return { tokens: await this.open(user.id, attempt, client, now, providerSecondFactor ? 'oidc_provider_mfa' : 'oidc', { on: trx }) };
  }

  onPendingOidc(handler: PendingOidcHandler): void {
    this.pendingOidcHandler = handler;
  }

  /**
   * The second step: the challenge of the password step and a second factor. A wrong code counts
   * against the same throttle as a wrong password (the person's e-mail from this address), wears
   * the challenge out, and is recorded as `second_factor_failed`.
   */
  async withSecondFactor(challengeToken: string, answer: SecondStepAnswer, client: ClientInfo): Promise<TokenSet> {
    const { db, clock } = this.deps;
    const { secondFactors, passkeys } = this.factors;
    const challenge = await findLiveChallenge(db, challengeToken, clock.now());
    if (!challenge) throw invalidChallenge();
    const attempt = await this.attempts.begin(challenge.email, client);
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
      if (challenge.pending_oidc !== null && this.pendingOidcHandler) await this.pendingOidcHandler(trx, challenge.user_id, challenge.pending_oidc, now, client);
      return proved;
    });
    if (method === 'dead') throw invalidChallenge();
    if (method === 'locked') throw secondFactorLocked();
    if (method === 'wrong') {
      this.outcomes.signIn('failed');
      throw wrongSecondFactor();
    }
    // After an identity provider, the method says so: oidc_totp rather than password_totp.
    const opened = challenge.first_factor === 'oidc' ? (method.replace(/^password_/, 'oidc_') as AuthenticationMethod) : method;
    // After a password, only while it is still the person's (the digest the first step kept).
    return this.open(challenge.user_id, attempt, client, now, opened, { passwordDigest: challenge.password_digest });
  }

  /** Begins a passwordless sign-in with a passkey: the options for the browser. */
  startWithPasskey(client: ClientInfo) {
    return this.factors.passkeys.startSignIn(client);
  }

  /**
   * Signs in with a passkey alone (a discoverable credential with user verification): the
   * browser's answer to a live challenge of startWithPasskey names its passkey, whose person signs
   * in. The challenge is used up whatever the verdict; every refusal answers the same `401
   * invalid_passkey` and is recorded as `sign_in_failed` (the person concerned when the passkey is
   * known; `sso_required` for a person whose domain must sign in at its provider). The sign-in
   * throttle is not asked: a signature cannot be guessed, and a person whose password is under
   * attack can still come in with their passkey.
   */
  async withPasskey(credential: unknown, client: ClientInfo): Promise<TokenSet> {
    const { db, clock } = this.deps;
    const { passkeys } = this.factors;
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
      this.outcomes.signIn('failed');
      throw unauthenticated('invalid_passkey', 'The passkey could not be verified, or its challenge is unknown, expired or used; start again.');
    }
    return this.open(outcome.id, { emailDigest: emailDigest(outcome.email), countedAddress: throttledAddress(client.ip) }, client, now, 'passkey');
  }

  /** The challenge of the second step, with the methods the person holds (one query after the other: one connection at a time). */
  private async challenge(on: Kysely<Database>, userId: string, now: Date, pendingOidc?: unknown, passwordDigest: Buffer | null = null) {
    const { secondFactors, passkeys } = this.factors;
    const passkey = await passkeys.secondStepOptions(userId, on);
    const codes = await secondFactors.methodsOf(userId, on);
    const challenge_token =
      pendingOidc === undefined
        ? await openChallenge(on, userId, now, passkey?.challenge ?? null, 'password', null, passwordDigest)
        : await openChallenge(on, userId, now, passkey?.challenge ?? null, 'oidc', pendingOidc);
    const methods = [...codes.filter((m) => m === 'totp'), ...(passkey ? (['passkey'] as const) : []), ...codes.filter((m) => m === 'recovery_code')];
    return { challenge_token, expires_in: CHALLENGE_TTL_S, methods, ...(passkey ? { passkey_options: passkey.options } : {}) };
  }

  /**
   * Opens a session for `userId`; the attempt's failures (its e-mail from its address) are
   * forgotten, and the device is remembered (with a notice to the person when it is new to them:
   * src/auth/sessions/devices.ts), in the same statement. A person disabled or erased since, or
   * (`passwordDigest`: of the hash a password sign-in verified) whose password changed since, gets
   * `401 invalid_credentials`, the answer to a wrong password; after a password it is recorded as
   * `sign_in_failed` and the attempt stays counted by the throttle, as a wrong password's does.
   */
  private async open(
    userId: string,
    attempt: { emailDigest: Buffer; countedAddress: string },
    client: ClientInfo,
    now: Date,
    method: AuthenticationMethod,
    { on = this.deps.db, passwordDigest = null }: { on?: Kysely<Database>; passwordDigest?: Buffer | null } = {},
  ): Promise<TokenSet> {
    const set = newTokenSet();
    const opened = await repo.tryOpenSession(on, {
      userId,
      ip: client.ip,
      userAgent: truncateUserAgent(client.userAgent),
      now,
      expiresAt: new Date(now.getTime() + this.deps.config.sessions.lifetimeS * 1000),
      accessDigest: digestToken(set.access_token),
      refreshDigest: digestToken(set.refresh_token),
      emailDigest: attempt.emailDigest,
      countedAddress: attempt.countedAddress,
      requestId: client.requestId ?? null,
      method,
      device: sightDevice(this.keys, client, now),
      passwordDigest,
    });
    if (opened === undefined) {
      if (passwordDigest !== null) await this.refusedAfterPassword(userId, client, now);
      throw invalidCredentials();
    }
    this.outcomes.signIn('succeeded');
    return set;
  }

  /**
   * A right password whose session was refused (the person disabled, or their password changed,
   * meanwhile): recorded as the failure it now is. Not for a person erased meanwhile: nothing is
   * recorded against them after their erasure (docs/ERASURE.md), their address least of all.
   */
  private async refusedAfterPassword(userId: string, client: ClientInfo, now: Date) {
    const { db } = this.deps;
    const user = await db.selectFrom('users').select(['status', 'erased_at']).where('id', '=', userId).executeTakeFirst();
    if (user?.erased_at != null) return void this.outcomes.signIn('failed');
    await recordSecurityEvent(db, {
      type: 'sign_in_failed',
      at: now,
      userId: user ? userId : null,
      ip: client.ip,
      requestId: client.requestId,
      userAgent: truncateUserAgent(client.userAgent),
      details: { reason: user?.status === 'active' ? 'wrong_password' : 'account_disabled' },
    });
    this.outcomes.signIn('failed');
  }
}
