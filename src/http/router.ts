// Routes come from the contract: each operation is served by the handler of its operationId,
// behind authentication and the operation's declared permission.
import { Router, type Request, type Response } from 'express';
import type { AnyResult, HandlerMap, OperationId } from '../contract/handler-types.js';
import type { OperationInfo } from '../contract/spec.js';
import type { Authenticators } from '../auth/principal.js';
import { authenticate } from './authenticate.js';

export function operationRouter(operations: OperationInfo[], handlers: HandlerMap, authenticators: Authenticators): Router {
  const router = Router();
  for (const op of operations) {
    const handler = handlers[op.operationId as OperationId] as unknown as ((input: unknown) => Promise<AnyResult>) | undefined;
    if (!handler) throw new Error(`No handler for operation ${op.operationId}`);
    router[op.method](op.expressPath, authenticate(op, authenticators), async (req: Request, res: Response) => {
      const input = {
        body: req.body,
        query: req.query,
        path: req.params,
        headers: req.headers,
        principal: res.locals.principal ?? null,
        request: {
          requestId: req.id,
          ip: req.ip ?? req.socket.remoteAddress ?? '',
          userAgent: req.get('user-agent') ?? '',
          // A getter: the request's logger is made only when a handler writes a line.
          get log() {
            return req.log;
          },
        },
      };
      const result = await handler(input);
      res.status(result.status);
      if (result.headers) res.set(result.headers);
      if (result.body === undefined) res.end();
      else res.json(result.body);
    });
  }
  return router;
}
