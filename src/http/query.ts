// The query string, parsed once per request. Express 5's `req.query` is a getter that parses the
// query string again at every read, and a request to an operation reads it four times: the check
// for unknown keys, the NUL-character check, the contract validator and the handler. Made here the
// request's own property, as express-openapi-validator makes it too (its "hack for express 5"),
// holding what the getter returns: the same object for every later reader.
import type { RequestHandler } from 'express';

export const parseQueryOnce: RequestHandler = (req, _res, next) => {
  Object.defineProperty(req, 'query', { writable: true, value: req.query });
  next();
};
