// RFC 9457 problem documents: the one error shape of the service.
import type { components } from '../../generated/openapi.js';

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
  413: 'Payload too large',
  415: 'Unsupported media type',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
};

type Extras = Partial<Pick<Problem, 'errors' | 'retry_after' | 'allowed_values' | 'required_permission' | 'missing_permissions'>>;

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
      detail: this.detail,
      code: this.code,
      request_id: requestId,
      ...this.extras,
    };
  }
}

export const BEARER_REALM = 'Bearer realm="backoffice"';

/** 401 with the RFC 6750 challenge; `error="invalid_token"` when a credential was sent and refused. */
export function unauthorized(code: string, detail: string, credentialSent: boolean): ProblemError {
  const challenge = credentialSent ? `${BEARER_REALM}, error="invalid_token"` : BEARER_REALM;
  return new ProblemError(401, code, detail, {}, { 'WWW-Authenticate': challenge });
}

export function forbidden(permission: Problem['required_permission'] & string): ProblemError {
  return new ProblemError(403, 'permission_denied', `This operation needs the permission ${permission}.`, {
    required_permission: permission,
  });
}
