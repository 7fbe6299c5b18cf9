// The Express application, assembled from its parts in the order a request meets them.
import express, { type Response } from 'express';
import helmet from 'helmet';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from './db/schema.js';
import type { HandlerMap } from './contract/handler-types.js';
import type { Authenticators } from './auth/principal.js';
import { indexOperations, operationMatcher, type OpenApiDocument } from './contract/spec.js';
import { contractValidator } from './contract/validator.js';
import { requestContext } from './http/request-context.js';
import { KeyInflector, type Inflection } from './http/inflection.js';
import { chooseInflection, inflectBodies } from './http/inflection-middleware.js';
import { errorHandler, notFound } from './http/errors.js';
import type { ProblemError } from './http/problem.js';
import { operationRouter } from './http/router.js';
import { refuseUnknownQueryParameters } from './http/unknown-query.js';
import { refuseNulCharacters } from './http/nul-characters.js';
import { operationalRoutes } from './http/operational.js';
import { webApp } from './http/web-app.js';

export interface AppDependencies {
  spec: OpenApiDocument;
  db: Kysely<Database>;
  logger: Logger;
  handlers: HandlerMap;
  authenticators: Authenticators;
  options: {
    validateResponses: boolean;
    trustProxy: boolean | number | string;
    bodyLimitBytes: number;
  };
}

export function createApp(deps: AppDependencies) {
  const { spec, options } = deps;
  const operations = indexOperations(spec);
  const inflector = new KeyInflector(spec);
  const problemSchema = { $ref: '#/components/schemas/Problem' };

  const writeProblem = (res: Response, problem: ProblemError, requestId: string) => {
    const style = (res.locals.inflection as Inflection | undefined) ?? 'snake';
    const body = inflector.toStyle(problem.toProblem(requestId), problemSchema, style);
    res.status(problem.status).set(problem.headers).type('application/problem+json');
    // Sent with send(), not json(): error bodies are built here from the Problem type, so they
    // skip the response validator (which knows only each operation's documented statuses).
    res.send(JSON.stringify(body));
  };

  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', options.trustProxy);
  app.set('query parser', 'simple');
  // No ETag: answers are per-caller JSON the contract offers no conditional requests for, and
  // hashing each body (SHA-1 of ~15 KB for a page of users) is CPU spent on every request.
  app.set('etag', false);
  app.use(requestContext(deps.logger));
  app.use(helmet());
  app.use(operationalRoutes(deps.db, spec));
  app.use(webApp(operations));
  app.use(chooseInflection);
  app.use(express.json({ limit: options.bodyLimitBytes, type: ['application/json', 'application/*+json'] }));
  const matchOperation = operationMatcher(operations);
  app.use(inflectBodies(inflector, matchOperation));
  app.use(refuseUnknownQueryParameters(matchOperation));
  app.use(refuseNulCharacters);
  app.use(contractValidator(spec, { validateResponses: options.validateResponses }));
  app.use(operationRouter(operations, deps.handlers, deps.authenticators));
  app.use(notFound);
  app.use(errorHandler(writeProblem));
  return app;
}
