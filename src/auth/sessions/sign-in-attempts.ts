// A sign-in attempt on an e-mail address, counted by the sign-in throttle (src/auth/throttle): the
// password step, the second step, a step-up with the password and a password change each begin
// one, so a stolen access token buys no more password guesses than the sign-in page does.
import type { Dependencies } from '../../dependencies.js';
import { rateLimited } from '../../errors.js';
import { uncounted } from '../../outcomes.js';
import { signInThrottle } from '../throttle/sign-in-throttle.js';
import { recordSecurityEvent } from './security-events.js';
import { truncateUserAgent, type ClientInfo } from './revocation.js';

export const tooManyAttempts = (retryAfter: number) => rateLimited(`Too many failed password attempts; try again in ${retryAfter} seconds.`, retryAfter);

export class SignInAttempts {
  private readonly throttle: ReturnType<typeof signInThrottle>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config' | 'outcomes'>) {
    this.throttle = signInThrottle(deps.db, deps.config.signInThrottle);
  }

  /** Begins an attempt on `email`; refused (429), recorded as `sign_in_throttled` and counted, while throttled. */
  async begin(email: string, client: ClientInfo) {
    const { db, clock, outcomes = uncounted } = this.deps;
    const attempt = await this.throttle.begin(email, client.ip, clock.now());
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

  /** Begins an attempt that is not a sign-in (a password change): refused while throttled, not journalled as a sign-in. */
  async beginUnjournalled(email: string, client: ClientInfo) {
    const attempt = await this.throttle.begin(email, client.ip, this.deps.clock.now());
    if (attempt.locked) throw tooManyAttempts(attempt.retryAfter);
    return attempt;
  }

  /** The attempt proved right: its failure is forgotten. */
  succeeded(attemptId: number) {
    return this.throttle.succeeded(attemptId);
  }
}
