// Who is calling: a signed-in person (through a session) or a third-party application (through an
// API key). Both carry the same kind of permission set, so authorization is one check.
import type { RateLimit } from '../limits/limiter.js';

export type Principal =
  | {
      kind: 'user';
      userId: string;
      sessionId: string;
      permissions: ReadonlySet<string>;
      /** The password was set by someone else: only changing it (and signing out) is allowed. */
      passwordChangeRequired?: boolean;
      /** A role requires a second factor and none is enrolled: only enrolling one (and signing out) is allowed. */
      secondFactorRequired?: boolean;
    }
  | {
      kind: 'api_key';
      apiKeyId: string;
      permissions: ReadonlySet<string>;
      /** The key's own rate limit; null: the deployment's default for keys, if any. */
      rateLimit?: RateLimit | null;
      /** The key carries a count of remaining uses: each admitted request spends one (Authenticators.spendKeyUse). */
      usageLimited?: boolean;
    };

/** What spending one use of a usage-limited key decided (src/api-keys/uses.ts). */
export interface KeyUseDecision {
  allowed: boolean;
  /** Uses left after this request (0 when refused); null when the key turned out not to be limited any more. */
  remaining: number | null;
  /** Seconds until the next refill; null when the key is not refilled. */
  refillInSeconds: number | null;
  /** The refill's amount and its period's length in seconds; null when the key is not refilled. */
  refill: { amount: number; periodSeconds: number } | null;
}

/**
 * An operation's `x-step-up` (docs/AUTH.md, "Step-up"): `always`, a fresh proof (a second factor,
 * or the password for a person without one); `with_second_factor`, a fresh second-factor proof
 * from a person who has one (the operation checks the password of a person without one itself;
 * a person whose domain's provider requires company sign-in needs a fresh proof all the same,
 * unless the password is one someone else set, to be replaced first);
 * `for_people`, a fresh proof from a signed-in person on an operation that API keys may also call
 * (a key has no session for what it makes to outlive: it reaches only what it was given).
 */
export type StepUpRequirement = 'always' | 'with_second_factor' | 'for_people';

/** Resolves a presented credential to a principal, or throws a refusal (`DomainError`, kind credential_refused). */
export interface Authenticators {
  apiKey(secret: string, request: { ip: string; requestId?: string; userAgent?: string }): Promise<Principal>;
  bearer(accessToken: string, request: { ip: string }): Promise<Principal>;
  /**
   * Spends one use of a usage-limited key, atomically across every process; refused when none is
   * left. Optional for stand-in authenticators that never answer such a key: without it, one is
   * refused (never admitted uncounted).
   */
  spendKeyUse?(apiKeyId: string): Promise<KeyUseDecision>;
  /** Throws `403 step_up_required` unless the session of this signed-in person holds a fresh proof `requirement` accepts. */
  stepUp(principal: Extract<Principal, { kind: 'user' }>, requirement: StepUpRequirement): Promise<void>;
}
