// The IETF httpapi draft's RateLimit-Policy and RateLimit fields
// (draft-ietf-httpapi-ratelimit-headers-10: `"name";q=N;w=S` and `"name";r=remaining;t=reset`),
// with the numbers the limiter decided with, and Retry-After on a refusal.
import type { Response } from 'express';
import type { Decision } from '../limits/limiter.js';
import { rateLimited } from '../errors.js';

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
