// The HTTP server around the app. Node's HTTP parser refuses some requests before Express ever
// sees them (headers over the 16 KiB limit, bytes that are not HTTP) and answers them itself with
// an empty body; we answer those with a problem+json document too, like every other error.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { ProblemError } from './problem.js';
import { drainSwitch, type Drain } from './drain.js';

function parserProblem(code: string | undefined): ProblemError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ProblemError(431, 'headers_too_large', 'The request headers are too large.', {}, {}, 'Request header fields too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ProblemError(408, 'request_timeout', 'The request did not arrive in time.', {}, {}, 'Request timeout');
    default:
      return new ProblemError(400, 'malformed_request', 'The request is not valid HTTP/1.1.');
  }
}

/** Writes the problem on the raw socket (no response object exists yet) and closes the connection. */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const problem = parserProblem(err.code);
  const body = JSON.stringify(problem.toProblem(requestId));
  socket.end(
    `HTTP/1.1 ${problem.status} ${http.STATUS_CODES[problem.status]}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

export interface HttpServer extends http.Server {
  /**
   * Shuts down without resetting a client's request. The drain switch goes on first (readiness
   * answers 503, and every answer from now on carries `Connection: close`, so its client sends
   * nothing more on that connection); then the listener closes (a new connection is refused at
   * connect: its client knows nothing was sent). Settles when the last connection has closed, or
   * after `graceMs`, when whatever is left is closed.
   *
   * A keep-alive connection idle at the signal is not closed by us: its client may be writing a
   * request onto it at this very moment, and closing it would reset that request (the client could
   * not tell whether it ran). It closes after its next answer, when its client closes it, or at the
   * keep-alive timeout every answer announced (`Keep-Alive: timeout=5`), after which a client
   * honouring it sends nothing. So a drain lasts up to that timeout when clients hold idle
   * connections, and `graceMs` bounds it.
   */
  shutDown(graceMs: number): Promise<void>;
}

/**
 * An Express app, whose requests and responses get its prototypes (app.request, app.response). Its
 * `handle` should be dispatch.ts's, which keeps the prototypes they are born with here; Express's
 * own re-prototypes every one (correct still, but without the saving).
 */
export interface ExpressLikeApp extends http.RequestListener {
  request: http.IncomingMessage;
  response: http.ServerResponse;
}

export function createHttpServer(app: ExpressLikeApp, drain: Drain = drainSwitch()): HttpServer {
  // Requests and responses are born with the app's prototypes: Express's app.handle would give
  // each its prototype with Object.setPrototypeOf (dispatch.ts skips that for these), a runtime
  // call that slows everything that touches the object afterwards (docs/BENCHMARKS.md).
  class AppRequest extends http.IncomingMessage {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  // Decided when the headers go out, not when the request came in: a request that started
  // before SIGTERM and answers after it closes its connection too. One function for every
  // response (`this` is the response), not a closure per request.
  const writeHead = http.ServerResponse.prototype.writeHead;
  const drainAwareWriteHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
    if (drain.draining && !this.headersSent) this.setHeader('Connection', 'close');
    return writeHead.apply(this, args);
  } as typeof writeHead;
  class AppResponse extends http.ServerResponse {
    constructor(...args: ConstructorParameters<typeof http.ServerResponse>) {
      super(...args);
      // Each response's own, not the prototype's: it stays when something re-prototypes the
      // response (a step that is an Express sub-app), and the drain must hold there too.
      (this as http.ServerResponse).writeHead = drainAwareWriteHead;
    }
  }
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  const server = http.createServer({ IncomingMessage: AppRequest, ServerResponse: AppResponse as typeof http.ServerResponse }, app);
  server.on('clientError', answerClientError);
  return Object.assign(server, {
    shutDown(graceMs: number) {
      drain.start();
      return new Promise<void>((resolve) => {
        const forced = setTimeout(() => server.closeAllConnections(), graceMs);
        forced.unref();
        // net.Server's close, not http.Server's: the latter also closes idle keep-alive connections
        // at once (Node 19+), which is the reset described above.
        net.Server.prototype.close.call(server, () => {
          clearTimeout(forced);
          resolve();
        });
      });
    },
  });
}
