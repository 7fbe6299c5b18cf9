// The app's requests go to its steps without Express's router (src/http/dispatch.ts): what the
// router and Express's app.handle gave every request is still there, and every way a request can
// end (answered, no step answered, an error, a broken error handler) still gets an answer.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import express, { type ErrorRequestHandler, type RequestHandler } from 'express';
import request from 'supertest';
import { captureLogs } from './support/context.js';
import { dispatchWithoutRouter } from '../src/http/dispatch.js';
import { createHttpServer } from '../src/http/server.js';
import { drainSwitch } from '../src/http/drain.js';

const notFound: RequestHandler = (_req, _res, next) => next(Object.assign(new Error('no such path'), { status: 404 }));
const answerError: ErrorRequestHandler = (err: { status?: number; message: string }, _req, res, _next) => {
  res.status(err.status ?? 500).json({ error: err.message });
};

function appWith(steps: RequestHandler, onError: ErrorRequestHandler = answerError) {
  const logs = captureLogs();
  const app = express();
  app.set('query parser', 'simple');
  dispatchWithoutRouter(app, logs.logger, steps, notFound, onError);
  return { app, logs };
}

describe('dispatch without a router', () => {
  it("gives a step Express's request and response, with what the router set before its first layer", async () => {
    const { app } = appWith((req, res) => {
      res.json({ originalUrl: req.originalUrl, baseUrl: req.baseUrl, params: req.params, query: req.query, path: req.path, header: req.get('x-thing'), same: req.res === res && res.req === req, locals: typeof res.locals });
    });
    const res = await request(app).get('/a/b?x=1&y=2').set('x-thing', 'yes');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ originalUrl: '/a/b?x=1&y=2', baseUrl: '', params: {}, query: { x: '1', y: '2' }, path: '/a/b', header: 'yes', same: true, locals: 'object' });
  });

  it('answers "no such path" through the error handler when no step answers', async () => {
    const { app } = appWith((_req, _res, next) => next());
    const res = await request(app).get('/nowhere');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: 'no such path' });
  });

  it('hands an error a step passes on, throws or rejects with to the error handler', async () => {
    const failing: [RequestHandler, number][] = [
      [(_req, _res, next) => next(Object.assign(new Error('passed on'), { status: 409 })), 409],
      [
        () => {
          throw Object.assign(new Error('thrown'), { status: 400 });
        },
        400,
      ],
      [
        async () => {
          await Promise.resolve();
          throw Object.assign(new Error('rejected'), { status: 422 });
        },
        422,
      ],
    ];
    for (const [step, status] of failing) {
      const { app } = appWith(step);
      const res = await request(app).get('/x');
      expect(res.status).toBe(status);
    }
  });

  it('answers a bare 500 and logs it when the error handler itself throws or passes the error on (never a hang)', async () => {
    for (const onError of [
      (() => {
        throw new Error('the error handler broke');
      }) as ErrorRequestHandler,
      ((err, _req, _res, next) => next(err)) as ErrorRequestHandler,
    ]) {
      const { app, logs } = appWith((_req, _res, next) => next(new Error('first')), onError);
      const res = await request(app).get('/x');
      expect(res.status).toBe(500);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toBe('Internal Server Error');
      expect(logs.records().some((r) => r.msg === 'the error handler failed')).toBe(true);
    }
  });

  it("lets a step's next('route') go on to \"no such path\", as Express's router did, instead of an error", async () => {
    const { app } = appWith((_req, _res, next) => next('route'));
    const res = await request(app).get('/x');
    expect(res.status).toBe(404);
  });

  it('drops the headers a broken error handler set before its bare 500', async () => {
    const { app } = appWith(
      (_req, _res, next) => next(new Error('first')),
      (_err, _req, res) => {
        res.setHeader('Retry-After', '1');
        throw new Error('the error handler broke');
      },
    );
    const res = await request(app).get('/x');
    expect(res.status).toBe(500);
    expect(res.headers['retry-after']).toBeUndefined();
  });

  it('hands the request back to the parent app when it is mounted in one and no step answered', async () => {
    const { app } = appWith((_req, _res, next) => next());
    const outer = express();
    outer.use(app);
    outer.use((_req, res) => void res.status(418).end());
    const res = await request(outer).get('/x');
    expect(res.status).toBe(418);
  });

  it("gives the requests of the service's own server (server.ts) Express's request and response from birth: no Object.setPrototypeOf on any of them, drain still closing", async () => {
    // Express's app.handle re-prototypes every request and response (expressjs/express#5998); on
    // this server they are born that way, and dispatch.ts leaves them be.
    const seen: (IncomingMessage | ServerResponse)[] = [];
    const { app } = appWith((req, res) => {
      seen.push(req, res);
      res.json({ header: req.get('x-thing'), path: req.path, same: req.res === res && res.req === req });
    });
    const drain = drainSwitch();
    const server = createHttpServer(app, drain);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a?b=1`;
    const setPrototypeOf = vi.spyOn(Object, 'setPrototypeOf');
    try {
      const answer = await fetch(url, { headers: { 'x-thing': 'yes' } });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toEqual({ header: 'yes', path: '/a', same: true });
      expect(answer.headers.get('connection')).toBe('keep-alive');
      drain.start();
      const drained = await fetch(url);
      expect(drained.headers.get('connection')).toBe('close');
      expect(seen).toHaveLength(4);
      expect(setPrototypeOf.mock.calls.filter(([target]) => seen.includes(target as IncomingMessage))).toEqual([]);
    } finally {
      setPrototypeOf.mockRestore();
      await server.shutDown(1000);
    }
  });

  it("keeps the drain's Connection: close when a step re-prototypes the response (an Express sub-app as a step)", async () => {
    const sub = express();
    sub.get('/a', (_req, res) => void res.json({ from: 'the sub-app' }));
    const { app } = appWith(sub as unknown as RequestHandler);
    const drain = drainSwitch();
    const server = createHttpServer(app, drain);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      drain.start();
      const answer = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/a`);
      expect(await answer.json()).toEqual({ from: 'the sub-app' });
      expect(answer.headers.get('connection')).toBe('close');
    } finally {
      await server.shutDown(1000);
    }
  });
});
