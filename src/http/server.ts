// The HTTP server around the app. Node's HTTP parser refuses some requests before Express ever
// sees them (headers over the 16 KiB limit, bytes that are not HTTP) and answers them itself with
// an empty body; we answer those with a problem+json document too, like every other error.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { randomUUID } from 'node:crypto';
import { ProblemError } from './problem.js';

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
   * Shutting down: every answer from now on carries `Connection: close`, so a keep-alive client
   * does not send another request on a connection that is about to close (and the connection
   * closes as soon as its answer is sent, rather than after the keep-alive timeout).
   */
  drain(): void;
}

export function createHttpServer(app: http.RequestListener): HttpServer {
  let draining = false;
  const server = http.createServer((req, res) => {
    // Decided when the headers go out, not when the request came in: a request that started
    // before SIGTERM and answers after it closes its connection too.
    const writeHead = res.writeHead;
    res.writeHead = function (this: http.ServerResponse, ...args: Parameters<typeof writeHead>) {
      if (draining && !this.headersSent) this.setHeader('Connection', 'close');
      return writeHead.apply(this, args);
    } as typeof writeHead;
    app(req, res);
  });
  server.on('clientError', answerClientError);
  return Object.assign(server, {
    drain() {
      draining = true;
    },
  });
}
