// The query string, parsed once per request. Express 5's `req.query` is a getter that parses the
// query string again at every read, and a request to an operation reads it four times: the check
// for unknown keys, the NUL-character check, the contract validator and the handler. Made here the
// request's own property holding what the getter returns: the same object for every later reader.
// express-openapi-validator's own path (its "hack for express 5") finds it, changes that object in
// place and puts the property back as it found it; a version of the library that replaced the
// object instead would lose its changes here (test/contract-validator-fast-path.test.ts compares
// what the handler sees on both of the validator's paths).
import type { RequestHandler } from 'express';

export const parseQueryOnce: RequestHandler = (req, _res, next) => {
  Object.defineProperty(req, 'query', { writable: true, value: req.query });
  next();
};
