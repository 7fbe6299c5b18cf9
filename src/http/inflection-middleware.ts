// Applies x-api-inflection at the edge: request bodies become snake_case before validation, and
// every JSON response (after response validation, which sees the canonical body) takes the style.
import type { RequestHandler } from 'express';
import { INFLECTION_HEADER, parseInflection, type KeyInflector } from './inflection.js';
import { inflectionOf, operationOf } from './operation.js';

/** Reads the header first, so even a body-parser error answers in the chosen style. */
export const chooseInflection: RequestHandler = (req, res, next) => {
  res.vary(INFLECTION_HEADER);
  res.locals.inflection = parseInflection(req.headers[INFLECTION_HEADER]);
  next();
};

export function inflectBodies(inflector: KeyInflector): RequestHandler {
  return (req, res, next) => {
    const style = inflectionOf(res);
    const op = operationOf(res);
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
