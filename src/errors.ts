// Domain errors: what went wrong, said in the domain's words. A rule throws one with a kind and a
// stable code; only the HTTP edge (src/http/problem.ts) turns the kind into a status, headers and a
// problem+json body, and the command line into a message. Nothing here knows HTTP.

export type ErrorKind =
  /** The input breaks a rule (a bad value, a policy, a cursor this service did not issue). */
  | 'invalid'
  /** No credential, or one that proves nothing (a wrong password). */
  | 'unauthenticated'
  /** A credential was presented and refused (unknown, expired, revoked, reused). */
  | 'credential_refused'
  /** The caller is known but may not do this. */
  | 'forbidden'
  | 'not_found'
  /** The request collides with the current state (a name taken, the last administrator). */
  | 'conflict'
  /** The request's precondition (If-Match) does not hold: the resource changed since the caller read it. */
  | 'precondition_failed'
  /** Well-formed, but at odds with what the request claims to be (an Idempotency-Key used for another request). */
  | 'unprocessable'
  /** Too many attempts; `retry_after` says when to try again. */
  | 'rate_limited'
  /** A broken invariant of our own: never the caller's fault. */
  | 'internal';

export interface FieldError {
  location: string;
  message: string;
  error_code?: string;
}

/** Machine-readable facts that travel with the error (snake_case: they are part of the contract). */
export interface ErrorDetails {
  errors?: FieldError[];
  retry_after?: number;
  allowed_values?: string[];
  required_permission?: string;
  missing_permissions?: string[];
  /** With step_up_required: the proofs the person can present (src/auth/sessions/step-up.ts). */
  step_up_methods?: string[];
}

export class DomainError extends Error {
  constructor(
    readonly kind: ErrorKind,
    readonly code: string,
    readonly detail: string,
    readonly details: ErrorDetails = {},
  ) {
    super(detail);
    this.name = 'DomainError';
  }
}

export const invalid = (code: string, detail: string, details?: ErrorDetails) => new DomainError('invalid', code, detail, details);
export const notFound = (code: string, detail: string) => new DomainError('not_found', code, detail);
export const conflict = (code: string, detail: string) => new DomainError('conflict', code, detail);
export const forbidden = (code: string, detail: string, details?: ErrorDetails) => new DomainError('forbidden', code, detail, details);
export const unauthenticated = (code: string, detail: string) => new DomainError('unauthenticated', code, detail);
export const refused = (code: string, detail: string) => new DomainError('credential_refused', code, detail);
export const rateLimited = (detail: string, retryAfter: number) =>
  new DomainError('rate_limited', 'rate_limited', detail, { retry_after: retryAfter });
export const internal = (detail: string) => new DomainError('internal', 'internal_error', detail);

/** One field of the request is invalid: the `validation_failed` shape every layer uses. */
export function validationFailed(errors: FieldError[], detail = errors.map((e) => `${e.location} ${e.message}`).join('; ')) {
  return invalid('validation_failed', detail, { errors });
}

/**
 * One field of the request is refused by a rule of the domain: `where` is `body`, `query` or
 * `path`, `errorCode` the field's stable reason. The problem's code is `validation_failed` unless
 * the contract documents one of its own for this refusal (`invalid_assignee`).
 */
export function fieldError(where: 'body' | 'query' | 'path', field: string, message: string, errorCode: string, code = 'validation_failed') {
  const errors = [{ location: `request/${where}/${field}`, message, error_code: errorCode }];
  return code === 'validation_failed' ? validationFailed(errors) : invalid(code, `request/${where}/${field} ${message}`, { errors });
}

/** The operation needs a permission the caller does not hold. */
export const permissionDenied = (permission: string) =>
  forbidden('permission_denied', `This operation needs the permission ${permission}.`, { required_permission: permission });
