// Runs middlewares one after another, as one handler (dispatch.ts hands it every request). Every
// step Express's router dispatches costs a layer match, a path trim and the router's bookkeeping
// objects, about 1 KB of garbage and a microsecond each (docs/BENCHMARKS.md); the API's steps need
// none of that, as none is mounted at a path. Same contract as Express: a step calls next() to go
// on, next(err) or a throw or a rejected promise to stop with an error.
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export function series(...steps: RequestHandler[]): RequestHandler {
  return (req: Request, res: Response, done: NextFunction) => {
    let index = 0;
    const next = (err?: unknown) => {
      if (err) return done(err);
      const step = steps[index++];
      if (!step) return done();
      try {
        const returned: unknown = step(req, res, next);
        if (returned instanceof Promise) returned.catch((error: unknown) => done(error ?? new Error('Rejected promise')));
      } catch (error) {
        done(error);
      }
    };
    next();
  };
}
