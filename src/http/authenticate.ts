// Authentication and authorization of one operation: who is calling (API key or bearer session),
// whether its rate limit admits the request (src/limits/), then whether that caller holds
// the permission the operation declares in the contract.
import type { Request, RequestHandler, Response } from 'express';
import type { OperationInfo, SecurityScheme } from '../contract/spec.js';
import type { Authenticators, Principal, StepUpRequirement } from '../auth/principal.js';
import { bearerToken } from '../auth/bearer.js';
import { forbidden, internal, invalid, permissionDenied, refused, unauthenticated } from '../errors.js';
import { operationOf } from './operation.js';
import type { Admission } from '../limits/admission/admission.js';
import { appendKeyUsesHeaders, keyUsesRefusal, rateLimitRefusal, setRateLimitHeaders } from './rate-limit-headers.js';
import { clientAddressOf } from './request-context.js';

const CREDENTIAL_NAMES: Record<SecurityScheme, string> = { apiKey: 'x-api-key', bearerAuth: 'Authorization: Bearer <access_token>', scimBearer: 'Authorization: Bearer <api key>' };

/** Whether a credential of the scheme was sent at all (not whether it is good): a non-empty header; for bearer, one naming the scheme. */
const PRESENT: Record<SecurityScheme, (req: Request) => boolean> = {
  apiKey: (req) => Boolean(req.headers['x-api-key']),
  bearerAuth: (req) => Boolean(req.headers.authorization?.toLowerCase().includes('bearer')),
  scimBearer: (req) => Boolean(req.headers.authorization?.toLowerCase().includes('bearer')),
};

/**
 * Runs before the contract validator, so that a request without any credential the operation
 * accepts is answered 401 before anything is said about its parameters or body. (The validator's
 * own check of this did it with a thrown Error and a chain of promises on every request.)
 */
export const requireCredentials: RequestHandler = (req, res, next) => {
  const op = operationOf(res);
  if (!op || op.security.length === 0 || op.security.some((scheme) => PRESENT[scheme](req))) return next();
  next(unauthenticated('unauthenticated', `This operation needs credentials: ${op.security.map((scheme) => CREDENTIAL_NAMES[scheme]).join(' or ')}.`));
};

/** Who is calling and whether they may call `op`: sets res.locals.principal, or throws a refusal. Undefined for an operation without this step. */
export function authenticate(op: OperationInfo, authenticators: Authenticators, admission?: Admission): ((req: Request, res: Response) => Promise<void>) | undefined {
  const acceptsKey = op.security.includes('apiKey');
  const acceptsBearer = op.security.includes('bearerAuth');
  // An API key in the Authorization header (SCIM: what Entra ID and Okta send). An operation takes
  // it or a session's access token there, never both: the one header would then mean two things.
  const acceptsKeyAsBearer = op.security.includes('scimBearer');
  if (acceptsKeyAsBearer && acceptsBearer) throw new Error(`${op.operationId}: scimBearer and bearerAuth cannot be offered together`);
  // `x-user-rate-limit`: an expensive operation, on which a person is held to USER_RATE_LIMIT.
  const userRateLimited = op.raw['x-user-rate-limit'] === true;
  // `x-authenticated-by: handler`: the handler checks the credential itself (POST /tokens accepts
  // an expired access token, which this step would refuse).
  const skip = (!acceptsKey && !acceptsBearer && !acceptsKeyAsBearer) || op.raw['x-authenticated-by'] === 'handler';
  // `x-step-up`: a sensitive change, made only with a fresh proof on the session (docs/AUTH.md,
  // "Step-up"). A key has neither session nor second factor to prove it with, so `always` and
  // `with_second_factor` on an operation that accepts keys (or skips this step) are a mistake of
  // the contract: refuse to start. `for_people` says so explicitly: keys call it without a proof.
  const stepUp = op.raw['x-step-up'] as StepUpRequirement | undefined;
  const peopleOnly = stepUp === 'always' || stepUp === 'with_second_factor';
  if (stepUp !== undefined && ((!peopleOnly && stepUp !== 'for_people') || (peopleOnly && acceptsKey) || !acceptsBearer || skip)) {
    throw new Error(`${op.operationId}: x-step-up must be "always" or "with_second_factor" on an operation for signed-in people only, or "for_people" on one that also accepts keys`);
  }
  if (skip) return undefined;

  return async (req, res) => {
    const apiKey = req.get('x-api-key');
    const authorization = req.get('authorization');
    if (apiKey !== undefined && authorization !== undefined) {
      throw invalid('ambiguous_credentials', 'Send either x-api-key or Authorization, not both.');
    }
    const context = { ip: clientAddressOf(req), requestId: req.id, userAgent: req.headers['user-agent'] };
    let principal: Principal;
    if (apiKey !== undefined && acceptsKey) {
      principal = await authenticators.apiKey(apiKey, context);
    } else if (authorization !== undefined && acceptsBearer) {
      const token = bearerToken(authorization);
      if (!token) throw refused('invalid_token', 'The Authorization header must be "Bearer <access_token>".');
      principal = await authenticators.bearer(token, context);
    } else if (authorization !== undefined && acceptsKeyAsBearer) {
      // The key goes through the one API-key authenticator: same checks (expiry, revocation,
      // allowed addresses, the creator's rights), same refusals (`401 invalid_api_key`).
      const key = bearerToken(authorization);
      if (!key) throw refused('invalid_api_key', 'The Authorization header must be "Bearer <api key>".');
      principal = await authenticators.apiKey(key, context);
    } else {
      const accepted = [acceptsKey && 'x-api-key', acceptsBearer && 'Authorization: Bearer', acceptsKeyAsBearer && 'Authorization: Bearer <api key>'].filter(Boolean).join(' or ');
      throw unauthenticated('unauthenticated', `This operation needs credentials: ${accepted}.`);
    }
    res.locals.principal = principal;
    // A password set by someone else is replaced before the account is used for anything else.
    if (principal.kind === 'user' && principal.passwordChangeRequired && op.raw['x-allowed-before-password-change'] !== true) {
      throw forbidden('password_change_required', 'Your password was set by someone else: choose your own with PUT /me/password first.');
    }
    // A role of this person requires a second factor (docs/AUTH.md): enrolling one comes next.
    if (principal.kind === 'user' && principal.secondFactorRequired && op.raw['x-allowed-before-second-factor'] !== true) {
      throw forbidden('second_factor_required', 'A role of yours requires a second factor: enrol one at POST /me/totp first.');
    }
    if (admission) {
      const pending = admission.admit(principal, userRateLimited);
      // Synchronous unless the limiter must reconcile first (src/limits/limiter.ts).
      const decision = pending instanceof Promise ? await pending : pending;
      if (decision) {
        setRateLimitHeaders(res, principal.kind === 'api_key' ? 'api-key' : 'user', decision);
        if (!decision.allowed) {
          admission.recordOutcome(principal, 'rate_limited');
          throw rateLimitRefusal(decision);
        }
      }
    }
    const permission = op.requiredPermission;
    if (permission && !principal.permissions.has(permission)) {
      admission?.recordOutcome(principal, 'permission_refused');
      throw permissionDenied(permission);
    }
    if (stepUp && principal.kind === 'user') await authenticators.stepUp(principal, stepUp);
    // Last: only a request every other check admits spends a use of a usage-limited key (one
    // atomic statement in the database; a key without the limit never reaches it).
    if (principal.kind === 'api_key' && principal.usageLimited) {
      if (!authenticators.spendKeyUse) throw internal('A usage-limited API key was presented to a server that cannot count its uses.');
      const use = await authenticators.spendKeyUse(principal.apiKeyId);
      appendKeyUsesHeaders(res, use);
      if (!use.allowed) {
        admission?.recordOutcome(principal, 'rate_limited');
        throw keyUsesRefusal(use);
      }
    }
    admission?.recordOutcome(principal, 'allowed');
  };
}
