// Routes come from the contract: each operation is served by the handler of its operationId,
// behind authentication and the operation's declared permission. The request's operation is
// already matched (operation.ts), so it is dispatched straight to its handler: an Express Router
// of every path would test the path against each route again.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { AnyResult, HandlerMap, RequestInfo, ServedOperationId } from './handler-types.js';
import { ALIAS_OF_KEY } from '../contract/path-aliases.js';
import type { OperationInfo } from '../contract/spec.js';
import type { Authenticators } from '../auth/principal.js';
import { authenticate } from './authenticate.js';
import { inflectionOf, operationOf } from './operation.js';
import { idempotencyRequestOf } from './idempotency-request.js';
import { entityTag, ifMatchPrecondition, notModified } from './entity-tags.js';
import { signedBodyOf } from './signed-body.js';
import type { Admission } from '../limits/admission/admission.js';
import { clientAddressOf } from './request-context.js';
import { KeyInflector } from '../contract/inflection.js';
import { loadSpec } from '../contract/spec.js';
import { StreamedJson } from '../streamed-json.js';
import { writeStreamedJson } from './streamed-body.js';

type Handle = (req: Request, res: Response) => Promise<void>;

/** What a handler knows of the request; the request's logger is made only when a handler writes a line. */
class HandlerRequest implements RequestInfo {
  readonly requestId: string;
  readonly ip: string;
  readonly userAgent: string;
  constructor(private readonly req: Request) {
    this.requestId = req.id;
    this.ip = clientAddressOf(req);
    this.userAgent = req.headers['user-agent'] ?? '';
  }
  get signedBody() {
    return signedBodyOf(this.req);
  }
  get log() {
    return this.req.log;
  }
}

export function operationRouter(operations: OperationInfo[], handlers: HandlerMap, authenticators: Authenticators, admission?: Admission, inflector?: KeyInflector): RequestHandler {
  const routes = new Map<OperationInfo, Handle>();
  for (const op of operations) {
    // An alias (the French paths) is served by the handler of the operation it is another name of.
    const served = (op.raw[ALIAS_OF_KEY] as string | undefined) ?? op.operationId;
    if (served !== op.operationId) assertSameGate(op, operations.find((o) => o.operationId === served));
    const handler = handlers[served as ServedOperationId] as unknown as ((input: unknown) => Promise<AnyResult>) | undefined;
    if (!handler) throw new Error(`No handler for operation ${op.operationId}`);
    const authenticated = authenticate(op, authenticators, admission);
    const conditional = op.headerParameters.has('if-match');
    routes.set(op, async (req, res) => {
      if (authenticated) await authenticated(req, res);
      // Decoded by the match, checked (and coerced) by the contract validator.
      req.params = res.locals.route?.pathParams ?? {};
      const result = await handler({
        body: req.body,
        query: req.query,
        path: req.params,
        headers: req.headers,
        principal: res.locals.principal ?? null,
        request: new HandlerRequest(req),
        idempotency: idempotencyRequestOf(req, res),
        precondition: conditional ? ifMatchPrecondition(req.headers['if-match'], inflectionOf(res), String(req.params.id)) : undefined,
      });
      res.status(result.status);
      if (result.headers) res.set(result.headers);
      if (result.revision !== undefined) {
        const tag = entityTag(result.revision, inflectionOf(res));
        res.set('ETag', tag);
        // RFC 9110, 13.1.2: the client's copy is current; 304 carries the tag and no body.
        if (req.method === 'GET' && notModified(req.headers['if-none-match'], tag)) {
          res.status(304).end();
          return;
        }
      }
      if (result.body === undefined) res.end();
      else if (result.body instanceof StreamedJson) await writeStreamedJson(res, result.body, inflector ?? (inflector = new KeyInflector(loadSpec())), op.responseSchemas.get(result.status), inflectionOf(res));
      else res.json(result.body);
    });
  }
  return (req: Request, res: Response, next: NextFunction) => {
    const op = operationOf(res);
    const route = op && routes.get(op);
    if (!route) return next();
    route(req, res).catch(next);
  };
}

/**
 * An alias is served by its original's handler, so it must be guarded as its original is: the same
 * credentials, permission and step-up (the bundle's aliases are copies; this refuses to start on a
 * hand-written `x-alias-of` that is not one).
 */
function assertSameGate(alias: OperationInfo, original: OperationInfo | undefined): void {
  const gate = (op: OperationInfo) =>
    JSON.stringify([op.method, op.security, op.requiredPermission, ...['x-step-up', 'x-authenticated-by', 'x-allowed-before-password-change', 'x-allowed-before-second-factor', 'x-user-rate-limit'].map((k) => op.raw[k])]);
  if (!original || gate(alias) !== gate(original)) throw new Error(`${alias.operationId}: x-alias-of names ${String(alias.raw[ALIAS_OF_KEY])}, which is not an operation guarded alike`);
}
