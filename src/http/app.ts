// The Express application, assembled from its parts in the order a request meets them.
import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler, type Response } from 'express';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { HandlerMap } from './handler-types.js';
import type { Authenticators } from '../auth/principal.js';
import type { Admission } from '../limits/admission/admission.js';
import { indexOperations, routeMatcher, type OpenApiDocument } from '../contract/spec.js';
import { contractValidator } from '../contract/validator.js';
import { styledContracts } from '../contract/styled.js';
import { responseChecker } from '../contract/response-validator.js';
import { validateResponses } from './response-validation.js';
import { requestContext } from './request-context.js';
import { KeyInflector } from '../contract/inflection.js';
import { inflectionOf, matchOperation, operationOf } from './operation.js';
import { chooseInflection, inflectBodies, noteRepeatedKeys } from './inflection-middleware.js';
import { errorHandler, notFound } from './errors.js';
import { ProblemError } from './problem.js';
import { DomainError } from '../errors.js';
import { operationRouter } from './router.js';
import { noteBodyDigest } from './idempotency-request.js';
import { requireCredentials } from './authenticate.js';
import { refuseUnknownQueryParameters } from './unknown-query.js';
import { refuseNulCharacters } from './nul-characters.js';
import { parseQueryOnce } from './query.js';
import { operationalRoutes } from './operational.js';
import { devMailboxRoute } from './dev-mailbox.js';
import type { MailboxMessage } from '../mail/dev-mailbox.js';
import { webApp } from './web-app.js';
import { noStore } from './cache-control.js';
import { headAsGet } from './head.js';
import { series } from './series.js';
import { dispatchWithoutRouter } from './dispatch.js';
import { securityHeaders } from './security-headers.js';
import { drainSwitch, type Drain } from './drain.js';
import { requestMetrics, type ObserveRequest } from './request-metrics.js';
import { requestTracing } from './request-tracing.js';
import type { Tracer } from '@opentelemetry/api';
import { keepSignedBody } from './signed-body.js';
import { isScimPath, scimErrorOf, scimMediaType } from './scim-errors.js';

export interface AppDependencies {
  spec: OpenApiDocument;
  db: Kysely<Database>;
  logger: Logger;
  handlers: HandlerMap;
  authenticators: Authenticators;
  /** Rate limits and key usage (src/limits/admission/admission.ts); none: nobody is limited. */
  admission?: Admission;
  options: {
    validateResponses: boolean;
    trustProxy: boolean | number | string;
    bodyLimitBytes: number;
    /** False: every request is validated by the library's own path, never the fast path for bodiless requests (src/contract/validator.ts); for the test comparing the two. */
    bodilessFastPath?: boolean;
  };
  /** The shutdown switch readiness reads (main.ts shares it with the HTTP server); off by default. */
  drain?: Drain;
  /** The development mailbox (src/http/dev-mailbox.ts), served only when given: never in production. */
  devMailbox?: { latest(limit: number): Promise<MailboxMessage[]> };
  /** Where every answered request is counted (the metrics); nowhere when absent. */
  observeRequest?: ObserveRequest;
  /** With tracing on, the tracer of the request spans; absent, requests are not traced (and pay nothing for it). */
  tracer?: Tracer;
}

/**
 * The body parser, on requests that carry a body (RFC 9112, 6.3: a Transfer-Encoding or a
 * Content-Length; type-is's hasBody, which the parser would ask first). A GET skips it: the
 * parser's own checks would cost CPU for nothing and add a `body` property to every request object.
 */
function onRequestsWithBody(parser: RequestHandler): RequestHandler {
  return (req, res, next) =>
    req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined ? parser(req, res, (err?: unknown) => next(undecodable(err) ?? err)) : next();
}

/**
 * A body its Content-Encoding cannot undo (not gzip, deflate or br, or cut short): the parser
 * passes zlib's error on with no `type`, unlike its own refusals; it is a malformed body, not ours.
 */
function undecodable(err: unknown): ProblemError | undefined {
  if (!err || err instanceof ProblemError || err instanceof DomainError || (err as { type?: unknown }).type !== undefined) return undefined;
  return new ProblemError(400, 'malformed_json', 'The request body is not valid JSON: it could not be decoded as its Content-Encoding says.');
}

/** express.json's `verify`: what is read from a body's raw bytes before it is parsed. */
function noteRequestBody(req: IncomingMessage, res: ServerResponse, raw: Buffer) {
  noteRepeatedKeys(req, res, raw);
  noteBodyDigest(req, raw);
  keepSignedBody(req, res, raw);
}

export function createApp(deps: AppDependencies) {
  const { spec, options } = deps;
  const operations = indexOperations(spec);
  const inflector = new KeyInflector(spec);
  // The contract in each key style: served at /openapi.json, and what responses are checked against.
  const contracts = styledContracts(spec);
  const checker = options.validateResponses ? responseChecker(contracts) : undefined;
  const problemSchema = { $ref: '#/components/schemas/Problem' };

  const writeProblem = (res: Response, problem: ProblemError, requestId: string) => {
    if (isScimPath(res.req.path)) return writeScimError(res, problem, requestId);
    const style = inflectionOf(res);
    let body = inflector.problemToStyle(problem.toProblem(requestId), operationOf(res)?.requestBodySchema, style);
    const violation = checker?.problemViolation(body, style);
    if (violation) {
      // Our bug, not the client's: say so in the log, and answer a problem the contract knows.
      res.req.log.error({ problem: problem.code, violation }, 'problem body breaks the contract');
      problem = new ProblemError(500, 'internal_error', 'An unexpected error occurred; quote the request id when reporting it.');
      body = inflector.toStyle(problem.toProblem(requestId), problemSchema, style);
    }
    res.status(problem.status).set(problem.headers).type('application/problem+json');
    // Sent with send(), not json(): error bodies are built here from the Problem type, so they
    // skip the response validator (which knows only each operation's documented statuses).
    res.send(JSON.stringify(body));
  };

  /** A SCIM path's error: RFC 7644's body (src/http/scim-errors.ts), never inflected. */
  const writeScimError = (res: Response, problem: ProblemError, requestId: string) => {
    let body = scimErrorOf(problem.toProblem(requestId));
    const violation = checker?.scimErrorViolation(body);
    if (violation) {
      res.req.log.error({ problem: problem.code, violation }, 'SCIM error body breaks the contract');
      problem = new ProblemError(500, 'internal_error', 'An unexpected error occurred; quote the request id when reporting it.');
      body = scimErrorOf(problem.toProblem(requestId));
    }
    res.status(problem.status).set(problem.headers).type(scimMediaType(res.req.headers.accept));
    res.send(JSON.stringify(body));
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  // Node's querystring: nul-characters.ts relies on it making U+0000 only from `%00`.
  app.set('query parser', 'simple');
  // No body-hash ETag: the contract's tags name row versions (src/http/entity-tags.ts), set by the
  // router on the operations that offer them; hashing each body (SHA-1 of ~15 KB for a page of
  // users) would be CPU spent on every request, and wrong for tags that must not follow the body.
  app.set('etag', false);
  // The steps every request meets, in order, as one series (series.ts: none of them is mounted at a
  // path), handed every request without Express's router (dispatch.ts).
  const steps = series(
    ...(deps.tracer ? [requestTracing(deps.tracer, options.trustProxy ? app.get('trust proxy fn') : undefined)] : []),
    ...(deps.observeRequest ? [requestMetrics(deps.observeRequest)] : []),
    // The request id may come from a trusted proxy only; with none trusted, no request checks.
    requestContext(deps.logger, options.trustProxy ? app.get('trust proxy fn') : undefined),
    securityHeaders(),
    operationalRoutes(deps.db, contracts, deps.drain ?? drainSwitch()),
    ...(deps.devMailbox ? [devMailboxRoute(deps.devMailbox, deps.authenticators)] : []),
    // HEAD is matched, validated and handled as the GET it mirrors (before the operation is matched).
    headAsGet,
    matchOperation(routeMatcher(operations)),
    webApp(),
    noStore,
    chooseInflection,
    onRequestsWithBody(express.json({ limit: options.bodyLimitBytes, type: ['application/json', 'application/*+json'], verify: noteRequestBody })),
    // Before inflectBodies: its res.json wrapper then runs last, on the body in the client's style.
    ...(checker ? [validateResponses(checker)] : []),
    inflectBodies(inflector),
    parseQueryOnce,
    refuseUnknownQueryParameters(),
    refuseNulCharacters,
    requireCredentials,
    contractValidator(spec, { bodilessFastPath: options.bodilessFastPath }),
    operationRouter(operations, deps.handlers, deps.authenticators, deps.admission, inflector),
  );
  dispatchWithoutRouter(app, deps.logger, steps, notFound, errorHandler(writeProblem));
  return app;
}
