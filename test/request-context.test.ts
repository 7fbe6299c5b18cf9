// The access log and the request's own logger (src/http/request-context.ts), on a bare Express app
// so that a handler can write whatever it likes.
import { describe, expect, it } from 'vitest';
import express from 'express';
import request from 'supertest';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { captureLogs } from './support/context.js';
import { requestContext, type TrustProxy } from '../src/http/request-context.js';

function appWith(handler: express.RequestHandler, trustProxy?: TrustProxy) {
  const logs = captureLogs();
  const app = express();
  app.use(requestContext(logs.logger, trustProxy));
  app.use(express.json());
  app.post('/echo', handler);
  return { app, logs };
}

describe('request context', () => {
  it("redacts credentials in a handler's own lines, which carry the request's id and path", async () => {
    const { app, logs } = appWith((req, res) => {
      req.log.info({ body: req.body as unknown }, 'handler line');
      res.status(204).end();
    });
    const res = await request(app).post('/echo?q=hidden').set('x-request-id', 'ctx-1').send({ password: 'SECRETPASSWORD', refresh_token: 'SECRETTOKEN', name: 'kept' });
    const line = logs.records().find((r) => r.msg === 'handler line');
    expect(line).toMatchObject({ req: { id: res.headers['x-request-id'], clientRequestId: 'ctx-1', method: 'POST', path: '/echo' }, body: { password: '[redacted]', refresh_token: '[redacted]', name: 'kept' } });
    expect(logs.text()).not.toContain('SECRET');
    expect(logs.text()).not.toContain('hidden');
  });

  it('logs the full path of a request served by a mounted router', async () => {
    const logs = captureLogs();
    const app = express();
    app.use(requestContext(logs.logger));
    const mounted = express.Router();
    mounted.get('/inner', (req, res) => {
      req.log.info('inside');
      res.status(204).end();
    });
    app.use('/outer', mounted);
    const res = await request(app).get('/outer/inner?x=1').set('x-request-id', 'ctx-mounted');
    const lines = logs.records().filter((r) => (r.req as { id?: string }).id === res.headers['x-request-id']);
    expect(lines.map((r) => [r.msg, (r.req as { path: string }).path])).toEqual([
      ['inside', '/outer/inner'],
      ['request completed', '/outer/inner'],
    ]);
  });

  it('writes one access line per answer, at error level for a 5xx, with the response time', async () => {
    const { app, logs } = appWith((_req, res) => {
      res.status(503).end();
    });
    const res = await request(app).post('/echo').send({});
    const lines = logs.records().filter((r) => (r.req as { id?: string }).id === res.headers['x-request-id']);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'request completed', res: { statusCode: 503 } });
    expect(typeof lines[0]!.responseTime).toBe('number');
  });

  it('logs a request whose client went away before the answer as aborted, once', async () => {
    let answer: (() => void) | undefined;
    const { app, logs } = appWith((_req, res) => {
      answer = () => res.status(200).end();
    });
    const server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nX-Request-Id: ctx-abort\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}');
    await expect.poll(() => answer).toBeDefined();
    socket.destroy();
    // No answer to read the id from: found by the client's own id, logged beside it.
    const aborted = () => logs.records().filter((r) => (r.req as { clientRequestId?: string }).clientRequestId === 'ctx-abort');
    await expect.poll(() => aborted().length).toBe(1);
    answer!();
    await new Promise((resolve) => server.close(resolve));
    expect(aborted()).toHaveLength(1);
    expect(aborted()[0]).toMatchObject({ msg: 'request aborted', level: 30 });
  });

  it("asks whether the immediate peer (hop 0, never an address of X-Forwarded-For) is trusted, and takes a sane id only from a trusted one", async () => {
    const asked: [string, number][] = [];
    const trust: TrustProxy = (address, hop) => {
      asked.push([address, hop]);
      return true;
    };
    const { app, logs } = appWith((_req, res) => {
      res.status(204).end();
    }, trust);
    const none = await request(app).post('/echo').send({});
    const insane = await request(app).post('/echo').set('x-request-id', 'not sane').send({});
    // Asked for the client's address (Context.ip), once per connection: here one per request.
    expect(asked).toEqual([
      [expect.stringMatching(/127\.0\.0\.1$/), 0],
      [expect.stringMatching(/127\.0\.0\.1$/), 0],
    ]);
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(insane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const proxied = await request(app).post('/echo').set('x-request-id', 'from-the-proxy').set('x-forwarded-for', '203.0.113.9').send({});
    expect(proxied.headers['x-request-id']).toBe('from-the-proxy');
    expect(asked).toHaveLength(3);
    expect(asked[2]).toEqual([expect.stringMatching(/127\.0\.0\.1$/), 0]);
    const line = logs.records().find((r) => (r.req as { id?: string }).id === 'from-the-proxy');
    expect(line!.req).not.toHaveProperty('clientRequestId');
  });

  it('asks once per connection: requests kept alive on one connection share its verdict', async () => {
    let asked = 0;
    const { app } = appWith(
      (_req, res) => {
        res.status(204).end();
      },
      () => ++asked > 0,
    );
    const server = createServer(app).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push(
        await new Promise<string>((resolve, reject) => {
          const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path: '/echo', agent, headers: { 'x-request-id': `kept-${i}` } }, (res) => {
            res.resume();
            res.on('end', () => resolve(String(res.headers['x-request-id'])));
          });
          req.on('error', reject);
          req.end();
        }),
      );
    }
    agent.destroy();
    await new Promise((resolve) => server.close(resolve));
    expect(ids).toEqual(['kept-0', 'kept-1', 'kept-2']);
    expect(asked).toBe(1);
  });
});
