// Matches the request to its operation of the contract once, first thing, and carries the match on
// the response's locals for every later step (web app, inflection, query check, response check,
// errors). The typed accessors below are the only readers of res.locals.
import type { RequestHandler, Response } from 'express';
import type { OperationInfo, RouteMatch } from '../contract/spec.js';
import type { Principal } from '../auth/principal.js';
import type { Inflection } from '../contract/inflection.js';

declare module 'express-serve-static-core' {
  interface Locals {
    route?: RouteMatch;
    inflection?: Inflection;
    principal?: Principal;
  }
}

export function matchOperation(match: (method: string, path: string) => RouteMatch): RequestHandler {
  return (req, res, next) => {
    res.locals.route = match(req.method, req.path);
    next();
  };
}

/** The operation this request addresses, or undefined (an unknown path or method). */
export const operationOf = (res: Response): OperationInfo | undefined => res.locals.route?.operation;

/** The key style the client chose (snake until the header is read). */
export const inflectionOf = (res: Response): Inflection => res.locals.inflection ?? 'snake';
