// Every refusal of the service is an RFC 9457 problem with a stable `code` and the request's id
// (docs: the contract's Problem schema). The client throws it as one of these classes, whatever
// the key style the problem was written in.

/** The problem document as the service sent it, in the client's key style. */
export type ProblemBody = Record<string, unknown>;

const FIELD_NAMES = {
  code: ['code', 'Code'],
  title: ['title', 'Title'],
  detail: ['detail', 'Detail'],
  type: ['type', 'Type'],
  requestId: ['request_id', 'requestId', 'request-id', 'RequestId'],
  retryAfter: ['retry_after', 'retryAfter', 'retry-after', 'RetryAfter'],
} as const;

function field(body: ProblemBody | undefined, names: readonly string[]): unknown {
  if (!body) return undefined;
  for (const name of names) if (name in body) return body[name];
  return undefined;
}

/** A problem answered by the service (4xx or 5xx). Branch on `code`, never on `title` or `detail`. */
export class ApiError extends Error {
  override name = 'ApiError';
  /** The HTTP status. */
  readonly status: number;
  /** The stable machine-readable code (`validation_failed`, `precondition_failed`, ...); `http_<status>` when the answer was not a problem. */
  readonly code: string;
  /** The request's id (the problem's, else the `X-Request-Id` header): quote it to the operator. */
  readonly requestId: string | undefined;
  readonly title: string | undefined;
  readonly detail: string | undefined;
  readonly type: string | undefined;
  /** The whole problem document, in the client's key style (`missing_permissions`, `errors`, ...). */
  readonly problem: ProblemBody | undefined;
  /** The method and URL of the request. */
  readonly request: { method: string; url: string };
  readonly headers: Headers;

  constructor(response: Response, problem: ProblemBody | undefined, request: { method: string; url: string }) {
    const code = field(problem, FIELD_NAMES.code);
    const detail = field(problem, FIELD_NAMES.detail);
    const title = field(problem, FIELD_NAMES.title);
    super(`${request.method} ${request.url}: ${response.status} ${typeof code === 'string' ? code : ''}${typeof detail === 'string' ? `: ${detail}` : typeof title === 'string' ? `: ${title}` : ''}`);
    this.status = response.status;
    this.code = typeof code === 'string' ? code : `http_${response.status}`;
    const requestId = field(problem, FIELD_NAMES.requestId);
    this.requestId = typeof requestId === 'string' ? requestId : (response.headers.get('x-request-id') ?? undefined);
    this.title = typeof title === 'string' ? title : undefined;
    this.detail = typeof detail === 'string' ? detail : undefined;
    const type = field(problem, FIELD_NAMES.type);
    this.type = typeof type === 'string' ? type : undefined;
    this.problem = problem;
    this.request = request;
    this.headers = response.headers;
  }
}

/** 412 `precondition_failed`: the resource changed since its `ETag` was read; nothing was written. Read it again, then decide. */
export class PreconditionFailedError extends ApiError {
  override name = 'PreconditionFailedError';
}

/** 429 `rate_limited` still refused after the client's own retries (or a wait longer than it may wait). */
export class RateLimitedError extends ApiError {
  override name = 'RateLimitedError';
  /** Seconds to wait before trying again, as the service said. */
  get retryAfterSeconds(): number | undefined {
    const value = field(this.problem, FIELD_NAMES.retryAfter) ?? this.headers.get('retry-after');
    const seconds = Number(value);
    return Number.isFinite(seconds) ? seconds : undefined;
  }
}

/** 401: no valid credential (an unknown, revoked or expired key; a session that ended and could not be refreshed). */
export class UnauthorizedError extends ApiError {
  override name = 'UnauthorizedError';
}

/** 403: the caller may not do this (`permission_denied` names what is missing; `step_up_required` asks for a fresh proof). */
export class ForbiddenError extends ApiError {
  override name = 'ForbiddenError';
}

/** 404 `not_found`. */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError';
}

/** 409: a conflict with the current state (`email_taken`, `idempotency_key_in_progress`, ...). */
export class ConflictError extends ApiError {
  override name = 'ConflictError';
}

/** 400 or 422: the request itself was refused (`validation_failed` with `errors`, `idempotency_key_reused`, ...). */
export class InvalidRequestError extends ApiError {
  override name = 'InvalidRequestError';
}

/** The request never got an answer (connection refused or cut, DNS, timeout), after the retries that were safe. */
export class NetworkError extends Error {
  override name = 'NetworkError';
  readonly request: { method: string; url: string };
  constructor(request: { method: string; url: string }, cause: unknown) {
    super(`${request.method} ${request.url}: no answer (${cause instanceof Error ? cause.message : String(cause)})`, { cause });
    this.request = request;
  }
}

/** The ApiError subclass for an answer. */
export function errorFor(response: Response, problem: ProblemBody | undefined, request: { method: string; url: string }): ApiError {
  const s = response.status;
  const Class =
    s === 412 ? PreconditionFailedError
    : s === 429 ? RateLimitedError
    : s === 401 ? UnauthorizedError
    : s === 403 ? ForbiddenError
    : s === 404 ? NotFoundError
    : s === 409 ? ConflictError
    : s === 400 || s === 422 ? InvalidRequestError
    : ApiError;
  return new Class(response, problem, request);
}
