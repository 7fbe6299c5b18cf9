// The IETF httpapi draft's RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers-10: `"name";q=N;w=S` and `"name";r=remaining;t=reset`),
// with the numbers the limiter decided with, and Retry-After on a refusal.
import type { Response } from 'express';
import type { Decision } from '../limits/limiter.js';
import type { KeyUseDecision } from '../auth/principal.js';
import { DomainError, rateLimited } from '../errors.js';

/** The one policy a caller is held to on a request; its name says whose limit it is. */
export function setRateLimitHeaders(res: Response, policy: 'api-key' | 'user', decision: Decision): void {
  res.setHeader('RateLimit-Policy', `"${policy}";q=${decision.limit.requests};w=${decision.limit.perSeconds}`);
  res.setHeader('RateLimit', `"${policy}";r=${decision.remaining};t=${decision.resetSeconds}`);
}

export const rateLimitRefusal = (decision: Decision) =>
  rateLimited(
    `This ${decision.limit.requests} requests per ${decision.limit.perSeconds} s limit is reached; try again in ${decision.resetSeconds} seconds.`,
    decision.resetSeconds,
  );

/**
 * A usage-limited key's uses, as one more policy of the same fields, `"api-key-uses"`, last in each
 * list: `r` the uses left after this request (exact: spent in the database), `t` the seconds until
 * the next refill; in RateLimit-Policy only when the key is refilled (`q` a period's amount, `w`
 * the period), since a count that is never refilled has no quota per window to state.
 */
export function appendKeyUsesHeaders(res: Response, decision: KeyUseDecision): void {
  if (decision.remaining === null) return;
  const append = (name: string, item: string) => {
    const current = res.getHeader(name);
    res.setHeader(name, typeof current === 'string' && current !== '' ? `${current}, ${item}` : item);
  };
  if (decision.refill) append('RateLimit-Policy', `"api-key-uses";q=${decision.refill.amount};w=${decision.refill.periodSeconds}`);
  append('RateLimit', `"api-key-uses";r=${decision.remaining}${decision.refillInSeconds === null ? '' : `;t=${decision.refillInSeconds}`}`);
}

/** No use left: 429, with Retry-After until the next refill when there is one (without, no retry can succeed). */
export const keyUsesRefusal = (decision: KeyUseDecision) =>
  decision.refillInSeconds === null
    ? new DomainError('rate_limited', 'api_key_uses_exhausted', 'This API key has no use left and is not refilled: its remaining uses must be raised before it is admitted again.')
    : new DomainError('rate_limited', 'api_key_uses_exhausted', `This API key has no use left until its next refill, in ${decision.refillInSeconds} seconds.`, {
        retry_after: decision.refillInSeconds,
      });
