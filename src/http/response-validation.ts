// Checks every JSON success body as it leaves, after x-api-inflection has styled it, against the
// contract of that style. Installed before inflectBodies, so its res.json wrapper runs after the
// inflection one. 5xx bodies are problems written by the error handler, which checks them itself.
import type { RequestHandler } from 'express';
import type { ResponseChecker } from '../contract/response-validator.js';
import { inflectionOf, operationOf } from './operation.js';

export function validateResponses(checker: ResponseChecker): RequestHandler {
  return (_req, res, next) => {
    const op = operationOf(res);
    if (op) {
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        // A throw here rejects the handler's promise: the error handler answers 500 instead.
        if (res.statusCode < 500) checker.checkBody(op, res.statusCode, body, inflectionOf(res));
        return json(body);
      };
    }
    next();
  };
}
