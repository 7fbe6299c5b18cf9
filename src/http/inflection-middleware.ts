// Applies x-api-inflection at the edge: request bodies become snake_case before validation, and
// every JSON response (after response validation, which sees the canonical body) takes the style.
import type { RequestHandler } from 'express';
import { INFLECTION_HEADER, parseInflection, type Inflection, type KeyInflector } from './inflection.js';
import type { OperationInfo } from '../contract/spec.js';

/** Reads the header first, so even a body-parser error answers in the chosen style. */
export const chooseInflection: RequestHandler = (req, res, next) => {
  res.vary(INFLECTION_HEADER);
  res.locals.inflection = 'snake';
  res.locals.inflection = parseInflection(req.headers[INFLECTION_HEADER]);
  next();
};

export function inflectBodies(inflector: KeyInflector, match: (method: string, path: string) => OperationInfo | undefined): RequestHandler {
  return (req, res, next) => {
    const style = res.locals.inflection as Inflection;
    const op = match(req.method, req.path);
    if (style !== 'snake' && req.body !== undefined && op?.requestBodySchema) {
      req.body = inflector.toSnake(req.body, op.requestBodySchema, style);
    }
    if (style !== 'snake') {
      const json = res.json.bind(res);
      res.json = (body: unknown) => json(inflector.toStyle(body, op?.responseSchemas.get(res.statusCode), style));
    }
    next();
  };
}
