// The span of a request (with tracing on: src/tracing/setup.ts), named by the operation the
// contract gives it (its operationId; the method alone for what is outside the contract), with
// the request id, the route's template (never the raw path, which holds ids) and the status.
// Everything the request runs (SQL statements, password hashes) is done inside it, so their
// spans are its children.
//
// A trace context sent with the request (W3C traceparent) is continued only from a trusted proxy
// (TRUST_PROXY), the rule the request id follows (request-context.ts): otherwise any client could
// join its requests to another's trace, or force every one of its requests to be sampled.
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { TrustProxy } from './request-context.js';
import { operationOf } from './operation.js';

const SPAN = Symbol('the request span');
type WithSpan = Response & { [SPAN]?: Span };

function endSpan(this: WithSpan) {
  const span = this[SPAN]!;
  const operation = operationOf(this);
  if (operation) {
    span.updateName(operation.operationId);
    span.setAttribute('http.route', operation.path);
  }
  const requestId = this.getHeader('x-request-id');
  if (typeof requestId === 'string') span.setAttribute('request.id', requestId);
  span.setAttribute('http.response.status_code', this.statusCode);
  if (this.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  if (!this.writableFinished) span.setAttribute('http.request.aborted', true);
  span.end();
}

export function requestTracing(tracer: Tracer, trustProxy?: TrustProxy): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    const parent = trustProxy && trustProxy(req.socket.remoteAddress ?? '', 0) ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
    const span = tracer.startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } }, parent);
    (res as WithSpan)[SPAN] = span;
    res.on('close', endSpan);
    const active = trace.setSpan(parent, span);
    // The body arrives in the request's stream events, whose callbacks run in the socket's context:
    // bound here, everything after the body parser still runs inside the request's span.
    context.bind(active, req);
    context.bind(active, res);
    context.with(active, next);
  };
}
