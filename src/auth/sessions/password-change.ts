// A signed-in person changing their password: the current one checked (a failed guess like a
// failed sign-in), the policy applied, the new one set, and their other sessions ended.
import type { Dependencies } from '../../dependencies.js';
import { DomainError } from '../../errors.js';
import { findCredentials, setPasswordHash } from '../../users/credentials.js';
import { hashPassword, passwordPolicyViolation, verifyPassword } from '../secrets/passwords.js';
import { countConfirmedFactors } from '../second-factors/repository.js';
import { livenessAt } from './liveness.js';
import { revokeSessions, truncateUserAgent, type ClientInfo } from './revocation.js';
import { recordSecurityEvent } from './security-events.js';
import { lockLiveSession, markSteppedUp, sessionGone } from './step-up.js';
import { ssoRequiredProvider } from './sso-required.js';
import type { SignInAttempts } from './sign-in-attempts.js';

const wrongCurrentPassword = () => new DomainError('invalid', 'invalid_current_password', 'The current password is wrong.');

export class PasswordChange {
  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>,
    private readonly attempts: SignInAttempts,
  ) {}

  /** Checks the current password, applies the policy, sets the new one and revokes the user's other sessions. */
  async change(userId: string, sessionId: string, current: string, next: string, client: ClientInfo): Promise<void> {
    const { db, clock, config } = this.deps;
    const violation = passwordPolicyViolation(next);
    if (violation) throw new DomainError('invalid', 'password_rejected', violation);
    // A wrong current password is a failed password guess like a failed sign-in: it counts, and is
    // refused while blocked, against the same limits (a stolen access token must not become a way
    // to guess the password).
    const credentials = await findCredentials(db, userId);
    if (!credentials) throw wrongCurrentPassword();
    const attempt = await this.attempts.beginUnjournalled(credentials.email, client);
    if (!credentials.password_hash || !(await verifyPassword(credentials.password_hash, current))) throw wrongCurrentPassword();
    await this.attempts.succeeded(attempt.attemptId);
    const newHash = await hashPassword(next);
    const now = clock.now();
    const userAgent = truncateUserAgent(client.userAgent);
    await db.transaction().execute(async (trx) => {
      // The person's row first, then the session: the order of every change that ends a person's
      // sessions (disabling, revoking them), or the two deadlock (test/authority-deadlocks.test.ts).
      await setPasswordHash(trx, userId, newHash, now, { chosenByUser: true });
      // The change is a proof made on this session (below): a session revoked or signed out while
      // the hashing ran changes nothing (the throw rolls the new hash back), as a step-up's proof
      // does not (step-up.ts).
      if (!(await lockLiveSession(trx, sessionId, livenessAt(now, config.sessions.idleTimeoutS)))) throw sessionGone();
      // The other sessions' revocations are recorded first, then the change with their count.
      const revoked = await revokeSessions(trx, { userId, exceptSessionId: sessionId }, 'password_changed', now, client, { type: 'user', userId, sessionId });
      await recordSecurityEvent(trx, { type: 'password_changed', at: now, userId, sessionId, ip: client.ip, requestId: client.requestId, userAgent, details: { sessions_revoked: revoked.length } });
      // The current password was just checked: for a person without a second factor, that is the
      // proof a step-up would ask for (docs/AUTH.md, "Step-up"); a person with one keeps theirs, and
      // a password that may not sign in (sso_required) proves nothing.
      if ((await countConfirmedFactors(trx, userId)) === 0 && !(await ssoRequiredProvider(trx, credentials.email))) await markSteppedUp(trx, sessionId, 'password', now);
    });
  }
}
