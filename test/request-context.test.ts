// The access log and the request's own logger (src/http/request-context.ts), on a bare Express app
// so that a handler can write whatever it likes.
import { describe, expect, it, vi } from 'vitest';
import express from 'express';
import request from 'supertest';
import { Agent, createServer, request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { captureLogs } from './support/context.js';
import { EventEmitter } from 'node:events';
import { Writable } from 'node:stream';
import fc from 'fast-check';
import { pino } from 'pino';
import { requestContext, type TrustProxy } from '../src/http/request-context.js';
import { createLogger, fixedShapeLines, isoTime } from '../src/logger.js';

function appWith(handler: express.RequestHandler, trustProxy?: TrustProxy) {
  const logs = captureLogs();
  const app = express();
  app.use(requestContext(logs.logger, trustProxy));
  app.use(express.json());
  app.post('/echo', handler);
  return { app, logs };
}

/** A stream that keeps each write, as it came (a log line per write). */
function keptWrites() {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { written, stream };
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

  // The access line is built as text (src/logger.ts, fixedShapeLines; summaryJson here) rather than
  // by pino: for any request it must be the very line pino writes of the same fields.
  it('writes the very access line pino would, byte for byte, whatever the path, ids, address, method and status', () => {
    const { written, stream } = keptWrites();
    const logger = createLogger('info', stream);
    const pinoLine = (fields: object, level: number, msg: string) => {
      const before = written.length;
      const accessLog = logger.child({}, { redact: [] });
      accessLog[level >= 50 ? 'error' : 'info'](fields, msg);
      return written.splice(before).join('');
    };
    vi.useFakeTimers();
    try {
      const middleware = requestContext(logger);
      fc.assert(
        fc.property(
          fc.record({
            url: fc.tuple(fc.string({ unit: 'binary' }), fc.option(fc.string({ unit: 'binary' }), { nil: undefined })).map(([path, query]) => `/${path}${query === undefined ? '' : `?${query}`}`),
            mounted: fc.boolean(),
            clientId: fc.option(fc.oneof(fc.stringMatching(/^[\w.:-]{1,20}$/), fc.string({ unit: 'binary' })), { nil: undefined }),
            address: fc.option(fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ unit: 'binary' })), { nil: undefined }),
            method: fc.constantFrom('GET', 'POST', 'HEAD', 'PATCH', 'DELETE', 'M-SEARCH'),
            status: fc.integer({ min: 100, max: 599 }),
            finished: fc.boolean(),
            elapsed: fc.nat(100_000),
            now: fc.integer({ min: 0, max: 4_102_444_800_000 }),
          }),
          (request) => {
            vi.setSystemTime(request.now);
            const socket = { remoteAddress: request.address };
            const req = { headers: request.clientId === undefined ? {} : { 'x-request-id': request.clientId }, socket, method: request.method, url: request.mounted ? '/inner' : request.url, originalUrl: request.mounted ? request.url : undefined };
            const headers = new Map<string, string>();
            const res = Object.assign(new EventEmitter(), { req, statusCode: request.status, writableFinished: request.finished, setHeader: (name: string, value: string) => headers.set(name, value) });
            middleware(req as never, res as never, () => {});
            vi.setSystemTime(request.now + request.elapsed);
            const before = written.length;
            res.emit('close');
            const line = written.splice(before).join('');
            const id = headers.get('X-Request-Id')!;
            const clientRequestId = request.clientId !== undefined && /^[\w.:-]{1,128}$/.test(request.clientId) && id !== request.clientId ? request.clientId : undefined;
            const path = request.url.split('?')[0];
            const fields = { req: { id, clientRequestId, method: request.method, path, remoteAddress: request.address, ip: request.address ?? '' }, res: { statusCode: request.status }, responseTime: request.elapsed };
            expect(line).toBe(pinoLine(fields, request.status >= 500 ? 50 : 30, request.finished ? 'request completed' : 'request aborted'));
          },
        ),
        { numRuns: 500 },
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it("times a line as pino's isoTime does, to the millisecond, whatever the instant and whichever came before", () => {
    vi.useFakeTimers();
    try {
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 0, max: 253_402_300_799_999 }), { minLength: 1, maxLength: 5 }), (instants) => {
          for (const instant of instants) {
            vi.setSystemTime(instant);
            expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
          }
        }),
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('writes through pino itself, the same line, for a logger whose lines it cannot build (a mixin, a message key, a nested key, hooks, a message prefix, redaction, serializers, a log formatter)', () => {
    const hooks = { logMethod(this: unknown, args: unknown[], method: (...a: unknown[]) => void) { method.apply(this, [...args.slice(0, 1), `hooked ${String(args[1])}`]); } };
    const streamWrite = { streamWrite: (line: string) => line.replace('"id":"a"', '"id":"scrubbed"') };
    const options = [{ mixin: () => ({ extra: 1 }) }, { messageKey: 'message' }, { nestedKey: 'payload' }, { hooks }, { hooks: streamWrite }, { msgPrefix: '[prefix] ' }];
    const perKey = [{ redact: ['req.id'] }, { redact: ['*.id'] }, { serializers: { req: () => ({ id: 'serialized' }) } }, { formatters: { log: (o: object) => ({ ...o, formatted: true }) } }];
    for (const option of [...options, ...perKey]) {
      const { written, stream } = keptWrites();
      const logger = pino({ ...option, base: { service: 'x' }, timestamp: false }, stream);
      fixedShapeLines(logger)(30, ',"req":{"id":"a"},"responseTime":1', 'request completed');
      logger.info({ req: { id: 'a' }, responseTime: 1 }, 'request completed');
      expect(written).toHaveLength(2);
      expect(written[0]).toBe(written[1]);
    }
  });

  it("writes the service's access line without pino's per-line work (not quietly through pino)", () => {
    const { written, stream } = keptWrites();
    // As requestContext makes its access logger from the service's logger.
    const accessLog = createLogger('info', stream).child({}, { redact: [] });
    const writeLine = fixedShapeLines(accessLog);
    const asJson = vi.spyOn(accessLog as unknown as Record<symbol, (...args: unknown[]) => string>, pino.symbols.asJsonSym);
    writeLine(30, ',"req":{"id":"a"},"responseTime":1', 'request completed');
    expect(written).toHaveLength(1);
    expect(asJson).not.toHaveBeenCalled();
    // The service's own logger redacts: its lines go through pino, redacted.
    fixedShapeLines(createLogger('info', stream))(30, ',"req":{"password":"hunter2"}', 'request completed');
    expect(written[1]).toContain('"password":"[redacted]"');
  });
});
