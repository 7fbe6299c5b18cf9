// RFC 9457 problem documents: the one error shape of the service.
import type { components } from '../../generated/openapi.js';
import { DomainError, type ErrorKind } from '../errors.js';

export type Problem = components['schemas']['Problem'];
export type FieldError = components['schemas']['ProblemFieldError'];

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Authentication required',
  403: 'Permission denied',
  404: 'Not found',
  405: 'Method not allowed',
  406: 'Not acceptable',
  409: 'Conflict',
  412: 'Precondition failed',
  413: 'Payload too large',
  415: 'Unsupported media type',
  422: 'Unprocessable content',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
};

/** The contract's bounds on a problem's text (a body full of mistakes must not make an answer unbounded). */
const MAX_FIELD_ERRORS = 50;
const MAX_FIELD_TEXT = 1024;
const MAX_DETAIL = 4096;
const cut = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);

type Extras = Partial<Pick<Problem, 'errors' | 'retry_after' | 'allowed_values' | 'required_permission' | 'missing_permissions' | 'step_up_methods'>>;

/** An error that becomes a problem response. Throw it from anywhere below the router. */
export class ProblemError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly extras: Extras = {},
    readonly headers: Record<string, string> = {},
    readonly title: string = TITLES[status] ?? 'Error',
  ) {
    super(detail);
    this.name = 'ProblemError';
  }

  toProblem(requestId: string): Problem {
    return {
      type: `urn:problem:backoffice:${this.code}`,
      title: this.title,
      status: this.status,
      detail: cut(this.detail, MAX_DETAIL),
      code: this.code,
      request_id: requestId,
      ...this.extras,
      ...(this.extras.errors
        ? { errors: this.extras.errors.slice(0, MAX_FIELD_ERRORS).map((e) => ({ ...e, location: cut(e.location, MAX_FIELD_TEXT), message: cut(e.message, MAX_FIELD_TEXT) })) }
        : {}),
    };
  }
}

export const BEARER_REALM = 'Bearer realm="backoffice"';

const STATUS: Record<ErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  credential_refused: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  precondition_failed: 412,
  unprocessable: 422,
  rate_limited: 429,
  internal: 500,
};

/** Titles that say more than the status's name. */
const TITLE_OF_CODE: Record<string, string> = {
  invalid_credentials: 'Invalid credentials',
  invalid_second_factor: 'Invalid second factor',
  invalid_challenge: 'Invalid challenge',
  validation_failed: 'Request validation failed',
};

/** The HTTP face of a domain error: its status, the headers its kind calls for, its problem body. */
export function fromDomainError(err: DomainError): ProblemError {
  const status = STATUS[err.kind];
  const headers: Record<string, string> = {};
  // RFC 6750: the challenge names invalid_token when a credential was sent and refused.
  if (err.kind === 'unauthenticated') headers['WWW-Authenticate'] = BEARER_REALM;
  if (err.kind === 'credential_refused') headers['WWW-Authenticate'] = `${BEARER_REALM}, error="invalid_token"`;
  if (err.details.retry_after !== undefined) headers['Retry-After'] = String(err.details.retry_after);
  return new ProblemError(status, err.code, err.detail, err.details as Extras, headers, TITLE_OF_CODE[err.code] ?? TITLES[status] ?? 'Error');
}
