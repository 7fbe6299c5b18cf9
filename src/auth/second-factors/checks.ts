// Checking a person's second factor when they sign in or step up: an authenticator app's code (under
// the daily cap on wrong codes) or a recovery code, used up in the caller's transaction; and which
// factors a person can offer. Enrolling them is src/auth/second-factors/service.ts's.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { Actor } from '../../audit/events.js';
import { keyringOf, type Keyring } from '../secrets/sealing-keys.js';
import { totpStep } from './totp.js';
import { keyRecoveryDigest, unkeyedRecoveryDigest } from './recovery-codes.js';
import { recordSecondFactorEvent, type RequestOrigin } from './events.js';
import * as repo from './repository.js';
import { countPasskeys } from './passkey-store.js';
import { CODE_FAILURE_WINDOW_MS, CODE_FAILURES_PER_DAY, openTotp, type SecondFactorAnswer, type SecondFactorMethod } from './service.js';

export class SecondFactorChecks {
  // From configuration, never from the database (src/auth/secrets/sealing-keys.ts): no query for it either.
  private readonly keys: Keyring;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'config'>) {
    this.keys = keyringOf(deps.config);
  }

  /**
   * Checks and uses up a second factor of `userId` during sign-in, in the caller's transaction:
   * what it proved, or null (wrong, replayed, used). A TOTP code's step is accepted once; a
   * recovery code once, ever. Records `recovery_code_used`; the caller records failures.
   */
  async useForSignIn(
    trx: Transaction<Database>,
    userId: string,
    answer: SecondFactorAnswer,
    now: Date,
    client: RequestOrigin,
    during: 'sign_in' | 'step_up' = 'sign_in',
  ): Promise<SecondFactorMethod | null | 'locked'> {
    if ('totp_code' in answer) {
      // The row locked first: two codes of one person are judged (and counted) one after the other, in every process.
      const row = await repo.lockTotp(trx, userId);
      if (!row?.confirmed_at) return null;
      const failures = await repo.countCodeFailures(trx, userId, new Date(now.getTime() - CODE_FAILURE_WINDOW_MS));
      // Past the cap the code is not even checked: right or wrong, it is refused, and tells nothing.
      if (failures >= CODE_FAILURES_PER_DAY) return 'locked';
      const key = openTotp(this.keys, userId, row);
      const step = key && totpStep(key, answer.totp_code, now);
      if (step !== null && (await repo.acceptTotpStep(trx, row.id, step, now, false))) return 'password_totp';
      await repo.recordCodeFailure(trx, userId, now);
      if (failures + 1 === CODE_FAILURES_PER_DAY) {
        const actor: Actor = during === 'sign_in' ? { type: 'anonymous' } : { type: 'user', userId, sessionId: null };
        await recordSecondFactorEvent(trx, 'second_factor_locked', { at: now, userId, actor, client, details: { failures: CODE_FAILURES_PER_DAY, during } });
      }
      return null;
    }
    const unkeyed = unkeyedRecoveryDigest(answer.recovery_code);
    const digests = this.keys.ids.map((keyId) => ({ keyId, digest: keyRecoveryDigest(this.keys.byId(keyId, 'recovery-code')!, unkeyed) }));
    if (!(await repo.useRecoveryCode(trx, userId, digests, now))) return null;
    const remaining = await repo.countUnusedRecoveryCodes(trx, userId);
    await recordSecondFactorEvent(trx, 'recovery_code_used', { at: now, userId, actor: { type: 'user', userId, sessionId: null }, client, details: { remaining } });
    return 'password_recovery_code';
  }

  /** The methods a person can use at sign-in now. */
  /** `on`: the transaction of the sign-in asking, if any (a request uses one connection at a time). */
  async methodsOf(userId: string, on: Kysely<Database> = this.deps.db): Promise<('totp' | 'recovery_code')[]> {
    const totp = await repo.findTotp(on, userId);
    const remaining = await repo.countUnusedRecoveryCodes(on, userId);
    return [...(totp?.confirmed_at ? (['totp'] as const) : []), ...(remaining > 0 ? (['recovery_code'] as const) : [])];
  }

  /** What a person can prove it is them with at a step-up (the order the back office offers them): never the password once they have a factor. */
  async stepUpMethodsOf(userId: string, on: Kysely<Database> = this.deps.db): Promise<('totp' | 'passkey' | 'recovery_code')[]> {
    const codes = await this.methodsOf(userId, on);
    const passkeys = await countPasskeys(on, userId);
    return [...codes.filter((m) => m === 'totp'), ...(passkeys > 0 ? (['passkey'] as const) : []), ...codes.filter((m) => m === 'recovery_code')];
  }
}
