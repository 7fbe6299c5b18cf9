// A person's second factors: enrolling and removing an authenticator app, recovery codes, the
// overview (SecondFactorService); checking a factor during sign-in is SecondFactorChecks
// (src/auth/second-factors/checks.ts). The policy (holders of the built-in admin role
// must have one unless ADMIN_SECOND_FACTOR=optional) is enforced at authentication
// (src/auth/sessions/authenticator.ts); `isRequired` says it for the overview.
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { Actor } from '../../audit/events.js';
import { conflict, forbidden, invalid, notFound, rateLimited } from '../../errors.js';
import { keyringOf, type Keyring } from '../secrets/sealing-keys.js';
import { signInThrottle } from '../throttle/sign-in-throttle.js';
import { newTotpKey, sealTotpKey, totpStep, unsealTotpKey } from './totp.js';
import { keyRecoveryDigest, newRecoveryCodes, unkeyedRecoveryDigest } from './recovery-codes.js';
import { recordSecondFactorEvent, type RequestOrigin } from './events.js';
import * as repo from './repository.js';

/** A second factor offered at sign-in. */
export type SecondFactorAnswer = { totp_code: string } | { recovery_code: string };

/** What a second factor proved, as the session records it. */
export type SecondFactorMethod = 'password_totp' | 'password_recovery_code';

/**
 * The daily cap (docs/AUTH.md, "The daily cap on wrong codes"): past this many wrong
 * authenticator-app codes of one person in a rolling day, at sign-in and at step-up together, the
 * app's codes are refused, right or wrong, until the oldest of them leave the day or an
 * administrator resets the person's factors; a recovery code or a passkey still works.
 */
export const CODE_FAILURES_PER_DAY = 10;
export const CODE_FAILURE_WINDOW_MS = 24 * 3600 * 1000;

export const secondFactorLocked = () =>
  forbidden(
    'second_factor_locked',
    `Too many wrong codes in the last 24 hours: codes of the authenticator app are refused for now. Use a recovery code or a passkey, or ask an administrator to reset your second factors.`,
  );

export const invalidSecondFactor = () => invalid('invalid_second_factor', 'The code is wrong or was already used.');
const tooManyAttempts = (retryAfter: number) => rateLimited(`Too many failed attempts; try again in ${retryAfter} seconds.`, retryAfter);

export interface Person {
  userId: string;
  sessionId: string;
  email: string;
}

/** The TOTP key of a row, opened with the key it was sealed under; null when that key is not configured. */
export function openTotp(keys: Keyring, userId: string, row: repo.SecondFactorRow): Buffer | null {
  const key = row.totp_key_id === null ? undefined : keys.byId(row.totp_key_id, 'totp-seal');
  return key ? unsealTotpKey(key, userId, row.totp_secret_sealed!) : null;
}

/** The actor of a person's own change, in their session. */
export const personActor = (me: Person): Actor => ({ type: 'user', userId: me.userId, sessionId: me.sessionId });

export class SecondFactorService {
  // From configuration, never from the database (src/auth/secrets/sealing-keys.ts): no query for it either.
  private readonly keys: Keyring;
  private readonly throttle: ReturnType<typeof signInThrottle>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.keys = keyringOf(deps.config);
    this.throttle = signInThrottle(deps.db, deps.config.signInThrottle);
  }

  async isRequired(userId: string): Promise<boolean> {
    const { db, config } = this.deps;
    return repo.rolesRequireSecondFactorOf(db, userId, config.secondFactor.requiredForAdmins);
  }

  async overview(userId: string) {
    const { db, clock } = this.deps;
    const since = new Date(clock.now().getTime() - CODE_FAILURE_WINDOW_MS);
    // One query after the other: a request holds one connection at a time.
    const required = await this.isRequired(userId);
    const totp = await repo.findTotp(db, userId);
    const remaining = await repo.countUnusedRecoveryCodes(db, userId);
    const failures = await repo.countCodeFailures(db, userId, since);
    const liftsAt = failures >= CODE_FAILURES_PER_DAY ? await repo.capLiftsAt(db, userId, since, CODE_FAILURES_PER_DAY, CODE_FAILURE_WINDOW_MS) : null;
    return {
      required,
      totp: totp?.confirmed_at ? { enrolled_at: totp.confirmed_at.toISOString(), last_used_at: totp.last_used_at?.toISOString() ?? null } : null,
      recovery_codes_remaining: remaining,
      code_failures: { in_last_day: failures, limit: CODE_FAILURES_PER_DAY, locked_until: liftsAt?.toISOString() ?? null },
    };
  }

  /** A new TOTP key, pending until confirmed; replaces a pending one. Shown once. */
  async startTotp(me: Person): Promise<{ secret: string; otpauth_uri: string }> {
    const { db, clock } = this.deps;
    const { key, base32, uri } = newTotpKey(me.email);
    const sealed = sealTotpKey(this.keys.current.key('totp-seal'), me.userId, key);
    if (!(await repo.putPendingTotp(db, me.userId, sealed, this.keys.current.id, clock.now()))) {
      throw conflict('totp_already_enrolled', 'An authenticator app is already enrolled; remove it first.');
    }
    return { secret: base32, otpauth_uri: uri };
  }

  /** A new set of recovery codes, in place of every earlier one (in `trx`); answered once. */
  async newCodesFor(trx: Transaction<Database>, userId: string, now: Date): Promise<string[]> {
    const codes = newRecoveryCodes();
    const key = this.keys.current.key('recovery-code');
    await repo.replaceRecoveryCodes(trx, userId, codes.map((code) => keyRecoveryDigest(key, unkeyedRecoveryDigest(code))), this.keys.current.id, now);
    return codes;
  }

  /**
   * Puts the pending TOTP key in force with a first code. A wrong code counts against the sign-in
   * throttle like a wrong password: a stolen access token must not become a way to guess codes.
   */
  async confirmTotp(me: Person, code: string, client: RequestOrigin): Promise<string[]> {
    const { db, clock } = this.deps;
    const attempt = await this.throttle.begin(me.email, client.ip, clock.now());
    if (attempt.locked) throw tooManyAttempts(attempt.retryAfter);
    const now = clock.now();
    const outcome = await db.transaction().execute(async (trx) => {
      const row = await repo.lockTotp(trx, me.userId);
      if (!row || row.confirmed_at) return 'not_started' as const;
      const key = openTotp(this.keys, me.userId, row);
      const step = key && totpStep(key, code, now);
      // Asked before this factor counts: codes come with the first factor only.
      const first = (await repo.countConfirmedFactors(trx, me.userId)) === 0;
      if (step === null || !(await repo.acceptTotpStep(trx, row.id, step, now, true))) {
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'totp', during: 'enrolment' } });
        return 'wrong' as const;
      }
      const codes = first ? await this.newCodesFor(trx, me.userId, now) : [];
      await recordSecondFactorEvent(trx, 'second_factor_enrolled', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'totp' } });
      return codes;
    });
    if (outcome === 'wrong') throw invalidSecondFactor();
    await this.throttle.succeeded(attempt.attemptId);
    if (outcome === 'not_started') throw notFound('totp_not_started', 'No authenticator app enrolment is waiting for a code: start one with POST /me/totp.');
    return outcome;
  }

  /** Removes the authenticator app; the recovery codes go with the last factor. */
  async removeTotp(me: Person, client: RequestOrigin): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const removed = await db.transaction().execute(async (trx) => {
      const row = await repo.deleteTotp(trx, me.userId);
      if (!row) return false;
      if (row.confirmed_at) {
        if ((await repo.countConfirmedFactors(trx, me.userId)) === 0) await repo.replaceRecoveryCodes(trx, me.userId, [], null, now);
        await recordSecondFactorEvent(trx, 'second_factor_removed', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'totp' } });
      }
      return true;
    });
    if (!removed) throw notFound('not_found', 'No authenticator app is enrolled.');
  }

  async regenerateRecoveryCodes(me: Person, client: RequestOrigin): Promise<string[]> {
    const { db, clock } = this.deps;
    const now = clock.now();
    return db.transaction().execute(async (trx) => {
      if ((await repo.countConfirmedFactors(trx, me.userId)) === 0) throw conflict('no_second_factor', 'Enrol a second factor first; recovery codes come with it.');
      const codes = await this.newCodesFor(trx, me.userId, now);
      await recordSecondFactorEvent(trx, 'recovery_codes_regenerated', { at: now, userId: me.userId, actor: personActor(me), client });
      return codes;
    });
  }
}
