// Query keys the operation does not declare are refused. express-openapi-validator does this too,
// except for keys holding `[` (it reads them as deepObject syntax and lets them through), so the
// rule is enforced here once, for every key, from the contract's parameter lists.
import type { RequestHandler } from 'express';
import { validationFailed } from '../errors.js';
import { operationOf } from './operation.js';

export function refuseUnknownQueryParameters(): RequestHandler {
  return (req, res, next) => {
    const op = operationOf(res);
    // No operation: the validator answers 404 or 405 for the path itself.
    const unknown = op ? Object.keys(req.query).filter((key) => !op.queryParameters.has(key)) : [];
    if (unknown.length === 0) return next();
    const message = 'is not a query parameter of this operation';
    const errors = unknown.map((key) => ({ location: `request/query/${key}`, message, error_code: 'additionalProperties' }));
    next(validationFailed(errors));
  };
}
