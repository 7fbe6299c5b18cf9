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
import type { IncomingMessage } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

declare module 'http' {
  interface IncomingMessage {
    /** This request's id, as echoed in X-Request-Id. */
    id: string;
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
  return { id: req.id, method, path: String(req.originalUrl ?? req.url).split('?')[0], remoteAddress: req.socket.remoteAddress, ip: req.ip };
}

export function requestContext(logger: Logger) {
  // No redaction paths: see above. Only this module writes through it.
  const accessLog = logger.child({}, { redact: [] });

  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction) {
    const sent = req.headers['x-request-id'];
    req.id = typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
    const method = req.method;
    res.setHeader('X-Request-Id', req.id);
    let log: Logger | undefined;
    Object.defineProperty(req, 'log', { configurable: true, enumerable: false, get: () => (log ??= logger.child({ req: summary(req, method) })) });

    const startedAt = Date.now();
    let logged = false;
    const logAnswer = () => {
      if (logged) return;
      logged = true;
      res.off('finish', logAnswer);
      res.off('close', logAnswer);
      const line = { req: summary(req, method), res: { statusCode: res.statusCode }, responseTime: Date.now() - startedAt };
      // Answered (finish) or the client went away first (close, with the status it would have had).
      const msg = res.writableFinished ? 'request completed' : 'request aborted';
      if (res.statusCode >= 500) accessLog.error(line, msg);
      else accessLog.info(line, msg);
    };
    res.on('finish', logAnswer);
    res.on('close', logAnswer);
    next();
  };
}
