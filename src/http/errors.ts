// Turns every error, whether ours, the validator's, the body parser's or an unexpected one, into
// a problem+json response. No stack trace or internal message ever reaches the client.
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ProblemError, fromDomainError, type FieldError } from './problem.js';
import { DomainError, validationFailed } from '../errors.js';
import { isDatabaseUnavailable } from '../db/errors.js';

interface ValidatorError {
  status: number;
  headers?: Record<string, string>;
  message: string;
  path?: string;
  errors?: { path: string; message: string; errorCode?: string }[];
}

function isValidatorError(err: unknown): err is ValidatorError {
  return typeof err === 'object' && err !== null && 'status' in err && Array.isArray((err as ValidatorError).errors);
}

/** The validator says `/body/session/password` (or `.query.limit`); the contract says `request/body/...`. */
const toLocation = (path: string) => `request/${path.replace(/^[./]+/, '').replace(/\./g, '/')}`;

/** Maps a thrown value to the problem it should answer. Exported for tests. */
export function toProblemError(err: unknown): ProblemError {
  if (err instanceof ProblemError) return err;
  if (err instanceof DomainError) return fromDomainError(err);
  const e = err as { type?: string; status?: number; message?: string };
  // body-parser
  if (e?.type === 'entity.parse.failed') return new ProblemError(400, 'malformed_json', 'The request body is not valid JSON.');
  if (e?.type === 'entity.too.large') return new ProblemError(413, 'payload_too_large', 'The request body is too large.');
  if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported')
    return new ProblemError(415, 'unsupported_media_type', 'The request body must be UTF-8 JSON.');
  if (isDatabaseUnavailable(err))
    return new ProblemError(503, 'service_unavailable', 'The database is not reachable; try again shortly.', {}, { 'Retry-After': '1' });
  if (isValidatorError(err)) return fromValidator(err);
  return new ProblemError(500, 'internal_error', 'An unexpected error occurred; quote the request id when reporting it.');
}

function fromValidator(err: ValidatorError): ProblemError {
  const fieldErrors: FieldError[] = (err.errors ?? []).map((item) => ({
    location: toLocation(item.path),
    message: item.message,
    ...(item.errorCode ? { error_code: item.errorCode.replace(/\.openapi\.validation$/, '') } : {}),
  }));
  switch (err.status) {
    case 400: {
      return fromDomainError(fieldErrors.length > 0 ? validationFailed(fieldErrors) : validationFailed([], err.message));
    }
    case 404:
      return new ProblemError(404, 'not_found', 'No resource lives at this path.');
    case 405:
      return new ProblemError(405, 'method_not_allowed', 'This path does not accept that method.', {}, err.headers?.Allow ? { Allow: err.headers.Allow } : {});
    case 406:
      return new ProblemError(406, 'not_acceptable', 'This operation answers application/json only.');
    case 413:
      return new ProblemError(413, 'payload_too_large', 'The request body is too large.');
    case 415:
      return new ProblemError(415, 'unsupported_media_type', 'The request body must be application/json.');
    default:
      return new ProblemError(500, 'internal_error', 'An unexpected error occurred; quote the request id when reporting it.');
  }
}

/**
 * What the log keeps of a refusal: the body parser's by its type alone, since JSON.parse's message
 * quotes the body around the fault (a password left unquoted); the validator's words name fields.
 */
function refusalNote(err: unknown): { type: string } | { message: string | undefined } {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? { type } : { message: (err as Error | null)?.message };
}

export type ProblemWriter = (res: Parameters<RequestHandler>[1], problem: ProblemError, requestId: string) => void;

export function errorHandler(writeProblem: ProblemWriter): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const problem = toProblemError(err);
    if (problem.status >= 500) req.log.error({ err }, 'request failed');
    else if (!(err instanceof ProblemError) && !(err instanceof DomainError)) req.log.debug({ err: refusalNote(err) }, 'request refused');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    writeProblem(res, problem, req.id);
  };
}

export const notFound: RequestHandler = (_req, _res, next) => {
  next(new ProblemError(404, 'not_found', 'No resource lives at this path.'));
};
