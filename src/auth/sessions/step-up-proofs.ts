// A fresh proof for the current session (the gate that asks for one: step-up.ts): a second factor
// of a person who has one, the password of a person who has none. A wrong password counts against
// the sign-in throttle like a failed sign-in (a stolen token must not become a way to guess it). A
// refused code or passkey answer counts against the session's own budget of refusals
// (step-up-refusals.ts), never the address's: strangers' failed sign-ins from the office's address
// do not block anyone's step-up; a wrong authenticator-app code also counts against the person's
// daily cap. Each counted refusal is recorded as `second_factor_failed` during `step_up`; past the
// budget, `429` with nothing checked, recorded once per lock window.
import type { Transaction } from 'kysely';
import type { Database, StepUpMethod } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { Actor } from '../../audit/events.js';
import { DomainError, forbidden, invalid } from '../../errors.js';
import { findCredentials } from '../../users/credentials.js';
import { verifyPassword } from '../secrets/passwords.js';
import { secondFactorLocked, type SecondFactorAnswer } from '../second-factors/service.js';
import { challengeOf, invalidPasskey } from '../second-factors/passkeys.js';
import { recordSecondFactorEvent } from '../second-factors/events.js';
import { countConfirmedFactors } from '../second-factors/repository.js';
import { livenessAt } from './liveness.js';
import type { ClientInfo } from './revocation.js';
import { lockLiveSession, markSteppedUp, sessionGone, STEP_UP_TTL_S } from './step-up.js';
import { ssoRequiredProvider } from './sso-required.js';
import { countStepUpRefusal, journalThrottled, stepUpRefusalGate, tooManyRefusals } from './step-up-refusals.js';
import type { SignInAttempts } from './sign-in-attempts.js';
import type { SignInFactors } from './factors.js';

/** A proof offered at POST /sessions/current/step-up: a code, a passkey's answer, or the password. */
export type StepUpAnswer = SecondFactorAnswer | { passkey: unknown } | { password: string };

/** The signed-in person stepping up. */
export interface SteppingUp {
  userId: string;
  sessionId: string;
  email: string;
}

export interface StepUpProved {
  method: StepUpMethod;
  valid_until: string;
}

const passwordRetired = () => forbidden('sso_required', "People of your domain sign in with their company's identity provider: step up there, or with a second factor.");

export class StepUpService {
  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>,
    private readonly factors: SignInFactors,
    private readonly attempts: SignInAttempts,
  ) {}

  async prove(me: SteppingUp, answer: StepUpAnswer, client: ClientInfo): Promise<StepUpProved> {
    if ('passkey' in answer) return this.proveWithPasskey(me, answer.passkey, client);
    const { db, clock } = this.deps;
    const { secondFactors } = this.factors;
    const methods = await secondFactors.stepUpMethodsOf(me.userId);
    const hasFactor = (await countConfirmedFactors(db, me.userId)) > 0;
    if ('password' in answer && hasFactor) {
      throw new DomainError('invalid', 'step_up_needs_second_factor', 'You have a second factor: prove it is you with a code from it.', { step_up_methods: methods });
    }
    // A password that may not sign in (its domain's provider requires company sign-in) proves nothing either.
    if ('password' in answer && (await ssoRequiredProvider(db, me.email))) throw passwordRetired();
    const actor: Actor = { type: 'user', userId: me.userId, sessionId: me.sessionId };
    if ('password' in answer) {
      const attempt = await this.attempts.begin(me.email, client);
      // Checked before any transaction: hashing must not hold a connection.
      const credentials = await findCredentials(db, me.userId);
      const right = credentials?.password_hash ? await verifyPassword(credentials.password_hash, answer.password) : false;
      const now = clock.now();
      // The attempt stays recorded as a failure when the answer was wrong.
      if (!right) throw new DomainError('invalid', 'invalid_current_password', 'The password is wrong.');
      await db.transaction().execute((trx) => this.proved(trx, me, 'password', now, client, actor));
      await this.attempts.succeeded(attempt.attemptId);
      return { method: 'password', valid_until: validUntil(now) };
    }
    const now = clock.now();
    const method = await db.transaction().execute(async (trx) => {
      const gate = await stepUpRefusalGate(trx, me.sessionId, now);
      if (gate.locked) return this.throttled(trx, me, gate, now, client);
      const used = await secondFactors.useForSignIn(trx, me.userId, answer, now, client, 'step_up');
      const kind = 'totp_code' in answer ? 'totp' : 'recovery_code';
      if (used === 'locked') return 'locked' as const;
      if (!used) {
        await countStepUpRefusal(trx, me.sessionId, now);
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: me.userId, actor, client, details: { method: kind, during: 'step_up' } });
        return null;
      }
      await this.proved(trx, me, kind, now, client, actor);
      return kind;
    });
    if (typeof method === 'object' && method !== null) throw tooManyRefusals(method.retryAfter);
    if (method === 'locked') throw secondFactorLocked();
    if (!method) throw invalid('invalid_second_factor', 'The code is wrong or was already used.');
    return { method, valid_until: validUntil(now) };
  }

  /** Begins a step-up with a passkey: options for the browser, their challenge bound to this session. */
  startWithPasskey(me: SteppingUp, client: ClientInfo) {
    return this.factors.passkeys.startStepUp(me, client);
  }

  /**
   * A step-up proved by a passkey: the browser's answer to a live challenge of startWithPasskey
   * asked for by this very session, signed by one of this person's passkeys, checked as at sign-in
   * (user verification, signature, counter, backup flags). The challenge is used up whatever the
   * verdict; every refusal is the same `400 invalid_passkey`, recorded as `second_factor_failed`
   * (during `step_up`, with the reason) and counted against the session's budget of refused
   * step-ups, like a wrong code: a signature cannot be guessed, but a thief holding a stolen access
   * token could otherwise write a journal row per refused answer (a made-up challenge costs
   * nothing) as fast as they send them. Past the budget, `429` with nothing checked.
   */
  private async proveWithPasskey(me: SteppingUp, credential: unknown, client: ClientInfo): Promise<StepUpProved> {
    const { db, clock } = this.deps;
    const { passkeys } = this.factors;
    const challenge = challengeOf(credential);
    const now = clock.now();
    const actor: Actor = { type: 'user', userId: me.userId, sessionId: me.sessionId };
    const ok = await db.transaction().execute(async (trx) => {
      const gate = await stepUpRefusalGate(trx, me.sessionId, now);
      if (gate.locked) return this.throttled(trx, me, gate, now, client);
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
      await this.proved(trx, me, 'passkey', now, client, actor);
      return true;
    });
    if (typeof ok === 'object') throw tooManyRefusals(ok.retryAfter);
    if (!ok) throw invalidPasskey();
    return { method: 'passkey', valid_until: validUntil(now) };
  }

  /** A step-up refused unchecked, its session past its budget of refusals: journalled once per lock window. */
  private async throttled(trx: Transaction<Database>, me: SteppingUp, gate: { retryAfter: number; first: boolean }, now: Date, client: ClientInfo) {
    await journalThrottled(trx, me, gate, now, client);
    return { retryAfter: gate.retryAfter };
  }

  /** The proof noted on the session, locked and checked live first (else 401, the transaction undone: nothing recorded). */
  private async proved(trx: Transaction<Database>, me: SteppingUp, method: StepUpMethod, now: Date, client: ClientInfo, actor: Actor) {
    if (!(await lockLiveSession(trx, me.sessionId, livenessAt(now, this.deps.config.sessions.idleTimeoutS)))) throw sessionGone();
    await markSteppedUp(trx, me.sessionId, method, now);
    await recordSecondFactorEvent(trx, 'session_stepped_up', { at: now, userId: me.userId, actor, client, details: { method } });
  }
}

const validUntil = (now: Date) => new Date(now.getTime() + STEP_UP_TTL_S * 1000).toISOString();
