// OpenTelemetry traces, against an in-memory exporter: a span per request named by its
// operationId and carrying the request id, a child span per SQL statement (its text, never its
// values) and per password hash; a client's traceparent is not followed unless it comes through a
// trusted proxy.
import { exporter, provider } from './support/tracing.js'; // first: pg is instrumented before it loads
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { startServerProcess } from './support/server-process.js';
import { SERVICE_NAME } from '../src/tracing/start.js';
import { tracingConfigured } from '../src/tracing/setup.js';
import { buildServices, createHandlers } from '../src/composition.js';
import type { HandlerMap } from '../src/http/handler-types.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.destroy();
  await provider.shutdown();
});
beforeEach(() => exporter.reset());

const tracer = () => provider.getTracer(SERVICE_NAME);
const childrenOf = (parent: ReadableSpan, spans: ReadableSpan[]) => spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
const statementOf = (span: ReadableSpan) => String(span.attributes['db.query.text'] ?? span.attributes['db.statement'] ?? '');

/** The spans of the one request answered with this request id. */
async function spansOf(requestId: string | undefined) {
  await provider.forceFlush();
  const spans = exporter.getFinishedSpans();
  const root = spans.find((s) => s.attributes['request.id'] === requestId);
  expect(root, `a span with request.id ${requestId}`).toBeDefined();
  return { root: root!, trace: spans.filter((s) => s.spanContext().traceId === root!.spanContext().traceId), all: spans };
}

describe('tracing', () => {
  it('names the request span by operationId, with the request id, and SQL statements as its children without their values', async () => {
    const { app } = createTestApp(database.db, { tracer: tracer() });
    const key = await makeApiKey(database.db, ['users.list']);
    const res = await request(app).get('/users?limit=5').set('x-api-key', key.secret);
    expect(res.status).toBe(200);
    const { root, trace, all } = await spansOf(res.headers['x-request-id']);
    expect(root.name).toBe('listUsers');
    expect(root.kind).toBe(1); // SpanKind.SERVER
    expect(root.parentSpanContext).toBeUndefined();
    expect(root.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/users', 'http.response.status_code': 200 });

    const statements = trace.filter((s) => statementOf(s) !== '');
    expect(statements.length).toBeGreaterThanOrEqual(2); // the key lookup and the page, at least
    for (const span of statements) {
      expect(childrenOf(root, trace)).toContain(span);
      expect(span.attributes['db.system'] ?? span.attributes['db.system.name']).toBe('postgresql');
    }
    expect(statements.some((s) => /\$1/.test(statementOf(s)))).toBe(true);
    // No parameter value anywhere: not the key, not its digest's hex, not any value list.
    const everything = JSON.stringify(all.map((s) => s.attributes));
    expect(everything).not.toContain(key.secret);
    expect(everything).not.toContain('db.postgresql.values');
    expect(everything).not.toContain('db.query.parameter');
  });

  it('gives each password verification a span of the sign-in, and never records the e-mail', async () => {
    const { app } = createTestApp(database.db, { tracer: tracer() });
    const user = await createUser(database.db);
    const res = await request(app).post('/sessions').send({ session: { email: user.email, password: user.password } });
    expect(res.status).toBe(201);
    const { root, trace } = await spansOf(res.headers['x-request-id']);
    expect(root.name).toBe('signIn');
    const hashes = trace.filter((s) => s.name === 'argon2id verify');
    expect(hashes).toHaveLength(1);
    expect(childrenOf(root, trace)).toContain(hashes[0]);
    expect(JSON.stringify(trace.map((s) => [s.name, s.attributes]))).not.toContain(user.email);
    expect(JSON.stringify(trace.map((s) => [s.name, s.attributes]))).not.toContain(user.password);
  });

  it('names what is outside the contract by its method, and marks a 5xx as an error', async () => {
    const { app } = createTestApp(database.db, { tracer: tracer() });
    const res = await request(app).get('/livez');
    const { root } = await spansOf(res.headers['x-request-id']);
    expect(root.name).toBe('GET');
    expect(root.attributes['http.route']).toBeUndefined();

    const base = createTestApp(database.db);
    const handlers = { ...createHandlers(buildServices(base.deps)), listUsers: async () => Promise.reject(new Error('boom')) } as HandlerMap;
    const failing = createTestApp(database.db, { tracer: tracer(), handlers }).app;
    const key = await makeApiKey(database.db, ['users.list']);
    const broken = await request(failing).get('/users').set('x-api-key', key.secret);
    expect(broken.status).toBe(500);
    const { root: failed } = await spansOf(broken.headers['x-request-id']);
    expect(failed.name).toBe('listUsers');
    expect(failed.status.code).toBe(2); // SpanStatusCode.ERROR
  });

  it("does not continue a client's trace, but does continue a trusted proxy's", async () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const direct = createTestApp(database.db, { tracer: tracer() }).app;
    const fromClient = await request(direct).get('/livez').set('traceparent', traceparent);
    expect((await spansOf(fromClient.headers['x-request-id'])).root.spanContext().traceId).not.toBe('0af7651916cd43dd8448eb211c80319c');
    const proxied = createTestApp(database.db, { tracer: tracer(), options: { trustProxy: 'loopback' } }).app;
    const fromProxy = await request(proxied).get('/livez').set('traceparent', traceparent);
    const { root } = await spansOf(fromProxy.headers['x-request-id']);
    expect(root.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c');
    expect(root.parentSpanContext?.spanId).toBe('b7ad6b7169203331');
  });

  it('sends the spans of a served process to the OTLP endpoint configured, and the SQL spans with them', { timeout: 120_000 }, async () => {
    const received: string[] = [];
    const collector = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url === '/v1/traces') received.push(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    const { port } = collector.address() as AddressInfo;
    try {
      const key = await makeApiKey(database.db, ['users.list']);
      const server = await startServerProcess({ DATABASE_URL: database.url, SWEEP_INTERVAL_S: '0', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` });
      const res = await fetch(`${server.url}/users?limit=5`, { headers: { 'x-api-key': key.secret } });
      expect(res.status).toBe(200);
      expect(await server.stop()).toBe(0); // the shutdown sends what is still batched
      const spans = received.join('\n');
      expect(spans).toContain('"name":"listUsers"');
      expect(spans).toContain(res.headers.get('x-request-id'));
      expect(spans).toContain('"postgresql"');
      expect(spans).toContain(`"${SERVICE_NAME}"`);
      expect(spans).not.toContain(key.secret);
    } finally {
      collector.close();
    }
  });

  it('is on only when an OTLP endpoint is configured', () => {
    expect(tracingConfigured({})).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe(true);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBe(false);
    expect(tracingConfigured({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBe(false);
  });
});
