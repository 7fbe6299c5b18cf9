// Request ids and access logs: every request gets an id (the client's X-Request-Id when it is
// sane, else a new one), echoed in the response and attached to every log line of the request.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';

const SANE_REQUEST_ID = /^[\w.:-]{1,128}$/;

export function requestContext(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const sent = req.headers['x-request-id'];
      const id = typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel(_req, res, err) {
      if (err || res.statusCode >= 500) return 'error';
      return 'info';
    },
    // Keep the access line small: no query strings (they may carry cursors or searches), no bodies.
    serializers: {
      // `ip` is the client's address as Express sees it: X-Forwarded-For counts only from a trusted proxy.
      req: (req) => ({ id: req.id, method: req.method, path: String(req.url).split('?')[0], remoteAddress: req.remoteAddress, ip: (req.raw as { ip?: string }).ip }),
      res: (res) => ({ statusCode: res.statusCode }),
    },
  });
}
