// helmet's security headers on every answer. With its defaults every one of them is a fixed value
// (no per-request nonce), so helmet computes them once, here, into a recorder, and each answer gets
// the recorded list: per request, helmet would otherwise rebuild the Content-Security-Policy text
// and run a dozen middlewares (~10 µs of a GET /users' CPU, docs/BENCHMARKS.md). Pass options with
// per-request values (a nonce function) to helmet itself, not here.
import helmet from 'helmet';
import type { RequestHandler } from 'express';

export function securityHeaders(): RequestHandler {
  const headers: [string, string][] = [];
  const recorder = {
    setHeader: (name: string, value: string) => void headers.push([name, value]),
    // Express's X-Powered-By is off already (app.ts).
    removeHeader: () => {},
  };
  let finished = false;
  helmet()({} as never, recorder as never, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished || headers.length === 0) throw new Error('helmet did not set its headers synchronously: apply it per request instead');
  return (_req, res, next) => {
    for (const [name, value] of headers) res.setHeader(name, value);
    next();
  };
}
