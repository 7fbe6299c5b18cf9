// Request ids and access logs: every request gets an id, answered in X-Request-Id and recorded
// with the audit and security events it causes, and one access line when it is answered.
//
// The id is a new UUID, unless the request came through a proxy that `trust proxy` (TRUST_PROXY)
// names and that proxy sent a sane X-Request-Id (nginx's $request_id): the same rule as for
// X-Forwarded-For. A client's own X-Request-Id is never the id, or anyone could give its audit
// events the id of someone else's request; a sane one is logged beside the id as
// `clientRequestId`, so a client can still be traced by it.
//
// Written on pino directly rather than through pino-http: pino-http makes a child logger per
// request and sends both the child's bindings and the access line through pino's redaction, which
// re-parses every redaction path on every call; that was about a tenth of a sign-in's event-loop
// time and a sixth of its garbage (docs/BENCHMARKS.md). Here the access line carries only the
// fields chosen below, none of which can hold a credential, so it skips redaction; `req.log`, for
// handlers' own lines (which may carry anything), is a redacting child made on first use.
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { mayHoldSecret } from '../auth/secrets/secrets.js';
import { fixedShapeLines } from '../logger.js';

declare module 'http' {
  interface IncomingMessage {
    /** This request's id, as answered in X-Request-Id: the service's own, or a trusted proxy's. */
    readonly id: string;
    /** A logger whose lines carry this request's summary; redacted like every other line. */
    log: Logger;
  }
}

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

/** Express's compiled `trust proxy` setting (app.get('trust proxy fn')): is this address, `hop` proxies away, trusted? */
export type TrustProxy = (address: string, hop: number) => boolean;

/** The request's path, without its query: `originalUrl`, as Express trims `url` inside mounted routers. */
function pathOf(req: IncomingMessage & { originalUrl?: string }) {
  const url = req.originalUrl ?? req.url ?? '';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

const json = JSON.stringify;

/**
 * What a log line says about a request, as JSON text: no query string (it may carry cursors or
 * searches), no headers, no body. Built as text for the access line (a line per request; what
 * JSON.stringify would make of these fields, test/request-context.test.ts); `req.log`'s lines,
 * made only when a handler writes one, carry it parsed.
 */
function summaryJson(req: IncomingMessage & { originalUrl?: string }, context: Context): string {
  // `clientRequestId` and `remoteAddress`, when undefined, are left out, as JSON.stringify leaves them.
  const clientId = context.clientId === undefined ? '' : `,"clientRequestId":${json(context.clientId)}`;
  const address = req.socket.remoteAddress;
  const remote = address === undefined ? '' : `,"remoteAddress":${json(address)}`;
  // `method` as sent: a HEAD is handled as a GET further on (head.ts).
  return `{"id":${json(context.id)}${clientId},"method":${json(context.method)},"path":${json(pathOf(req))}${remote},"ip":${json(context.ip)}}`;
}

/** What this module keeps of a request, in one property: each property added to a request object after Node made it costs a copy of its property store. */
interface Context {
  /** The request id, as answered in X-Request-Id. */
  readonly id: string;
  /** The sane X-Request-Id of a client that is not a trusted proxy: logged, never the id. */
  readonly clientId: string | undefined;
  readonly logger: Logger;
  /** The method as the client sent it. */
  readonly method: string;
  /** When the request was received, in ms. */
  readonly startedAt: number;
  /**
   * The client's address as Express's `req.ip` tells it (X-Forwarded-For counts only from a
   * trusted proxy), worked out once: `req.ip` is a getter that parses the addresses again on every
   * read, and the authentication, the handler and the access line each need it.
   */
  readonly ip: string;
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
/** The client's address (Context.ip): what `req.ip` answers, without working it out again. */
export const clientAddressOf = (req: IncomingMessage): string => contextOf(req, 'ip').ip;
/** The method as the client sent it (Context.method): HEAD, where head.ts has made it a GET; the request's own without the middleware. */
export const sentMethodOf = (req: IncomingMessage): string | undefined => (req as WithContext)[CONTEXT]?.method ?? req.method;

Object.defineProperty(http.IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: WithContext) {
    const context = contextOf(this, 'log');
    return (context.requestLogger ??= context.logger.child({ req: JSON.parse(summaryJson(this, context)) as object }));
  },
});

/**
 * `trustProxy`: Express's compiled `trust proxy` setting, or undefined when no proxy is trusted
 * (then no request pays for a trust check).
 */
export function requestContext(logger: Logger, trustProxy?: TrustProxy) {
  // No redaction paths: see above. Only this module writes through it.
  const accessLog = logger.child({}, { redact: [] });

  // Whether a connection's peer is a trusted proxy, decided once per connection: the peer of a
  // socket never changes, a proxy keeps its connections open (nginx's `keepalive`), and a check
  // is not free (proxy-addr parses the address every time).
  const verdicts = new WeakMap<Socket, boolean>();
  function fromTrustedProxy(socket: Socket, trust: TrustProxy) {
    let trusted = verdicts.get(socket);
    if (trusted === undefined) {
      // Hop 0: the immediate peer, the socket's address (X-Forwarded-For plays no part in it).
      trusted = trust(socket.remoteAddress ?? '', 0);
      verdicts.set(socket, trusted);
    }
    return trusted;
  }

  // A response emits 'close' once, when it is answered (after 'finish') or when the client went
  // away first; it is then logged with the status it would have had. One listener for every
  // response (`this` is the response), not a closure per request. The line is pino's, built here
  // as text (src/logger.ts, fixedShapeLines): the bytes `accessLog.info({ req, res: { statusCode },
  // responseTime }, msg)` would write, for less CPU (bench/access-line.ts, docs/BENCHMARKS.md).
  const writeLine = fixedShapeLines(accessLog);
  function logAnswer(this: Response) {
    const req = this.req as WithContext & Request;
    const context = req[CONTEXT]!;
    const fields = `,"req":${summaryJson(req, context)},"res":{"statusCode":${this.statusCode}},"responseTime":${Date.now() - context.startedAt}`;
    writeLine(this.statusCode >= 500 ? 50 : 30, fields, this.writableFinished ? 'request completed' : 'request aborted');
  }

  return function requestContextMiddleware(req: Request, res: Response, next: NextFunction) {
    const header = req.headers['x-request-id'];
    // An id holding what looks like a secret (a caller's own key or token, sent by mistake or on
    // purpose) is not sane: it would be logged, answered and recorded in clear.
    const sent = typeof header === 'string' && SANE_REQUEST_ID.test(header) && !mayHoldSecret(header) ? header : undefined;
    const fromProxy = sent !== undefined && trustProxy !== undefined && fromTrustedProxy(req.socket, trustProxy);
    const id = fromProxy ? sent : randomUUID();
    res.setHeader('X-Request-Id', id);
    // With no proxy trusted, or from a peer that is not one, X-Forwarded-For plays no part: the
    // address is the socket's, as `req.ip` would say; else `req.ip` works through the proxies.
    const ip = (trustProxy === undefined || !fromTrustedProxy(req.socket, trustProxy) ? req.socket.remoteAddress : req.ip) ?? '';
    (req as WithContext)[CONTEXT] = { id, clientId: fromProxy ? undefined : sent, logger, method: req.method, startedAt: Date.now(), ip };
    res.on('close', logAnswer);
    next();
  };
}
