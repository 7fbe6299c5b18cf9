// Request ids and access logs: every request gets an id (the client's X-Request-Id when it is
// sane, else a new one), echoed in the response, and one access line when it is answered.
//
// Written on pino directly rather than through pino-http: pino-http makes a child logger per
// request and sends both the child's bindings and the access line through pino's redaction, which
// re-parses every redaction path on every call; that was about a tenth of a sign-in's event-loop
// time and a sixth of its garbage (docs/BENCHMARKS.md). Here the access line carries only the
// fields chosen below, none of which can hold a credential, so it skips redaction; `req.log`, for
// handlers' own lines (which may carry anything), is a redacting child made on first use.
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

declare module 'http' {
  interface IncomingMessage {
    /** This request's id, as echoed in X-Request-Id. */
    readonly id: string;
    /** A logger whose lines carry this request's summary; redacted like every other line. */
    log: Logger;
  }
}

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** What a log line says about a request: no query string (it may carry cursors or searches), no headers, no body. */
function summary(req: IncomingMessage & { ip?: string; originalUrl?: string }, method: string | undefined) {
  // `originalUrl`: Express trims `url` inside mounted routers. `ip` is the client's address as
  // Express sees it: X-Forwarded-For counts only from a trusted proxy. `method` as sent: a HEAD
  // is handled as a GET further on (head.ts).
  const url = req.originalUrl ?? req.url ?? '';
  const query = url.indexOf('?');
  return { id: req.id, method, path: query < 0 ? url : url.slice(0, query), remoteAddress: req.socket.remoteAddress, ip: req.ip };
}

/** What this module keeps of a request, in one property: each property added to a request object after Node made it costs a copy of its property store. */
interface Context {
  /** The request id, as echoed in X-Request-Id. */
  readonly id: string;
  readonly logger: Logger;
  /** The method as the client sent it. */
  readonly method: string;
  /** When the request was received, in ms. */
  readonly startedAt: number;
  /** The request's own logger, once made. */
  requestLogger?: Logger;
}
const CONTEXT = Symbol('the request context');
type WithContext = IncomingMessage & { [CONTEXT]?: Context };

// `req.id` and `req.log` (made on first use) are getters defined once, here, for every request. (A getter
// defined on each request object gave every request a hidden class of its own, which slows down
// every later read of any property of it, in Express and everywhere else.)
function contextOf(req: WithContext, what: string): Context {
  const context = req[CONTEXT];
  if (!context) throw new Error(`req.${what} is available behind the request context middleware only`);
  return context;
}
Object.defineProperty(http.IncomingMessage.prototype, 'id', {
  configurable: true,
  get(this: WithContext) {
    return contextOf(this, 'id').id;
  },
});
Object.defineProperty(http.IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: WithContext) {
    const context = contextOf(this, 'log');
    return (context.requestLogger ??= context.logger.child({ req: summary(this, context.method) }));
  },
});

export function requestContext(logger: Logger) {
  // No redaction paths: see above. Only this module writes through it.
  const accessLog = logger.child({}, { redact: [] });

  // A response emits 'close' once, when it is answered (after 'finish') or when the client went
  // away first; it is then logged with the status it would have had. One listener for every
  // response (`this` is the response), not a closure per request.
  function logAnswer(this: Response) {
    const req = this.req as WithContext & Request;
    const context = req[CONTEXT]!;
    const line = { req: summary(req, context.method), res: { statusCode: this.statusCode }, responseTime: Date.now() - context.startedAt };
    const msg = this.writableFinished ? 'request completed' : 'request aborted';
    if (this.statusCode >= 500) accessLog.error(line, msg);
    else accessLog.info(line, msg);
  }

  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction) {
    const sent = req.headers['x-request-id'];
    const id = typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
    res.setHeader('X-Request-Id', id);
    (req as WithContext)[CONTEXT] = { id, logger, method: req.method, startedAt: Date.now() };
    res.on('close', logAnswer);
    next();
  };
}
