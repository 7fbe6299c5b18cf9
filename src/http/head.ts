// HEAD is answered wherever GET is, with the same status and headers and no body (RFC 9110). The
// contract lists GET only, so a HEAD request is routed, validated and handled as the GET it
// mirrors; Node's response already knows it answers a HEAD and sends no body. The access log
// still names the method as sent (request-context.ts reads it before this runs).
import type { RequestHandler } from 'express';

export const headAsGet: RequestHandler = (req, _res, next) => {
  if (req.method === 'HEAD') req.method = 'GET';
  next();
};
