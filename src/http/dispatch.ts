// Hands every request of the app straight to its steps, without Express's router in between.
// The app's steps are one series (series.ts), then "no such path", then the error handler: with
// `app.use` for each, Express's router would run for every request only to reach the first,
// matching it against its layers, building its bookkeeping (next and restore closures, a params
// object per layer, a finalhandler) and its tracing checks: CPU and garbage on every request
// (measured on one person's week, docs/BENCHMARKS.md), for nothing the API uses. What
// Express's app.handle does for each request is done here (req and res become Express's: req.get,
// res.json, the app's settings) but X-Powered-By, which the app turns off; a step's `next('route')`
// or `next('router')` goes on, as the router's did. The routers the steps hold themselves (the web
// app's files, the probes) are still Express's routers. Not seen by the router's diagnostics
// channel (`express.router.request`): nothing here listens to it.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

type Handle = (req: IncomingMessage, res: ServerResponse, callback?: NextFunction) => void;

/** What the app does with every request: `steps`, then `notFound` if none answered, and `onError` for any error they pass on. */
export function dispatchWithoutRouter(app: Express, logger: Logger, steps: RequestHandler, notFound: RequestHandler, onError: ErrorRequestHandler): void {
  const { request, response } = app;

  /** The error handler failed too (our bug): what Express's finalhandler would do, without the page. */
  function lastResort(res: Response, err: unknown) {
    logger.error({ err }, 'the error handler failed');
    if (res.headersSent) res.destroy();
    else {
      for (const name of res.getHeaderNames()) res.removeHeader(name);
      res.statusCode = 500;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('Internal Server Error');
    }
  }

  const handle: Handle = (incoming, outgoing, callback) => {
    // Express's app.handle: the circular references, Express's prototypes, res.locals.
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    // Born with them when the server is server.ts's: then nothing changes.
    if (!request.isPrototypeOf(req)) Object.setPrototypeOf(req, request);
    if (!response.isPrototypeOf(res)) Object.setPrototypeOf(res, response);
    if (!res.locals) res.locals = Object.create(null) as Response['locals'];
    // What Express's router sets before its first layer (a layer mounted at `/`: no params).
    req.originalUrl = req.originalUrl || req.url;
    req.baseUrl = '';
    req.params = {};
    const fail: NextFunction = (err?: unknown) => {
      try {
        onError(err, req, res, (again?: unknown) => lastResort(res, again ?? err));
      } catch (thrown) {
        lastResort(res, thrown);
      }
    };
    // After the steps: "no such path", or the error; to the parent app's next when this app is mounted in one.
    const done: NextFunction = (err?: unknown) => {
      if (err === 'route' || err === 'router') err = undefined;
      if (callback) callback(err);
      else if (err) fail(err);
      else notFound(req, res, fail);
    };
    req.next = done;
    // As Express's router runs a layer: a throw or a rejected promise is an error passed on.
    try {
      const returned: unknown = steps(req, res, done);
      if (returned instanceof Promise) returned.catch((err: unknown) => done(err ?? new Error('Rejected promise')));
    } catch (err) {
      done(err);
    }
  };
  (app as unknown as { handle: Handle }).handle = handle;
}
