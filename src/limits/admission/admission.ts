// What a caller may spend, decided after authentication: an API key's own rate limit (or the
// deployment's default for keys, API_KEY_DEFAULT_RATE_LIMIT), and a signed-in person's limit on
// the operations the contract marks `x-user-rate-limit` (USER_RATE_LIMIT). And the outcome of
// every request made with a key, counted for its usage.
import type { Dependencies } from '../../dependencies.js';
import type { Principal } from '../../auth/principal.js';
import { RateLimiter, type Decision, type RateLimit } from '../limiter.js';
import { postgresCounterStore } from '../repository.js';
import type { UsageCounter, UsageOutcome } from '../../api-keys/usage.js';

/** What the HTTP edge asks of admission (src/http/authenticate.ts): AdmissionService below. */
export interface Admission {
  /** The limiter's decision for this caller on an operation, or undefined when no limit applies. */
  admit(principal: Principal, userRateLimited: boolean): Decision | Promise<Decision> | undefined;
  /** The outcome of a request made with an API key (nothing for a person). */
  recordOutcome(principal: Principal, outcome: UsageOutcome): void;
  /** Pushes this process's counts and reads everyone's (the background step, and tests). */
  reconcile(): Promise<void>;
}

export class AdmissionService implements Admission {
  private readonly limiter: RateLimiter;

  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>,
    private readonly usage: UsageCounter,
  ) {
    this.limiter = new RateLimiter(postgresCounterStore(deps.db), deps.clock, deps.config.rateLimits.unsyncedFraction);
  }

  /** The limiter's decision for this caller on an operation, or undefined when no limit applies. */
  admit(principal: Principal, userRateLimited: boolean): Decision | Promise<Decision> | undefined {
    const limited = this.limitOf(principal, userRateLimited);
    return limited && this.limiter.admit(limited[0], limited[1]);
  }

  /** The outcome of a request made with an API key (nothing for a person). */
  recordOutcome(principal: Principal, outcome: UsageOutcome): void {
    if (principal.kind === 'api_key') this.usage.count(principal.apiKeyId, outcome, this.deps.clock.now());
  }

  /** Pushes this process's counts and reads everyone's (the background step, and tests). */
  async reconcile(): Promise<void> {
    await Promise.all([this.limiter.reconcile(), this.usage.flush(this.deps.db)]);
  }

  private limitOf(principal: Principal, userRateLimited: boolean): [string, RateLimit] | undefined {
    const { apiKeyDefault, user } = this.deps.config.rateLimits;
    if (principal.kind === 'api_key') {
      const limit = principal.rateLimit ?? apiKeyDefault;
      return limit ? [`key:${principal.apiKeyId}`, limit] : undefined;
    }
    return userRateLimited && user ? [`user:${principal.userId}`, user] : undefined;
  }
}
