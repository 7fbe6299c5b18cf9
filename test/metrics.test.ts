// Prometheus metrics: requests by operationId and status class, sign-in, refresh and API-key
// outcomes, the pool, hashing and the audit seal lag; served on a listener of its own, never on
// the public one, and never labelled with anything personal or unbounded.
import http from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import client from 'prom-client';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { createUser, refresh, signIn } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { A_FREE_PORT, startServerProcess } from './support/server-process.js';
import { ManualClock } from '../src/clock.js';
import { serviceMetrics } from '../src/metrics/registry.js';
import { recordSecurityEvent } from '../src/auth/sessions/security-events.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** The value of one series in the exposition text, e.g. `backoffice_sign_ins_total{outcome="failed"}`. */
function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

function get(url: string): Promise<{ status: number; text: string; type?: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text, type: res.headers['content-type'] }));
      })
      .on('error', reject);
  });
}

describe('metrics in one process', () => {
  it('hand a full batch of answered requests to the histogram without waiting for a scrape (what waits in memory is bounded)', async () => {
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock: new ManualClock(new Date('2026-01-01T00:00:00Z')) });
    const histogram = metrics.registry.getSingleMetric('backoffice_http_request_duration_seconds') as client.Histogram;
    const observe = vi.spyOn(histogram, 'observe');
    try {
      for (let i = 0; i < 1023; i++) metrics.observeRequest('listUsers', 200, 0.003);
      expect(observe).not.toHaveBeenCalled();
      metrics.observeRequest('listUsers', 200, 0.003);
      expect(observe).toHaveBeenCalledTimes(1024);
    } finally {
      observe.mockRestore();
    }
  });

  it('report each outcome once however often Prometheus scrapes', async () => {
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock: new ManualClock(new Date('2026-01-01T00:00:00Z')) });
    metrics.outcomes.signIn('failed');
    metrics.outcomes.signIn('failed');
    metrics.outcomes.apiKeyAuthentication('accepted');
    for (let scrape = 0; scrape < 3; scrape++) {
      const text = await metrics.registry.metrics();
      expect(value(text, 'backoffice_sign_ins_total{outcome="failed"}')).toBe(2);
      expect(value(text, 'backoffice_sign_ins_total{outcome="succeeded"}')).toBe(0);
      expect(value(text, 'backoffice_api_key_authentications_total{outcome="accepted"}')).toBe(1);
    }
  });

  it('count every request observed in batches, across full batches and the scrape, each once', async () => {
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock: new ManualClock(new Date('2026-01-01T00:00:00Z')) });
    for (let i = 0; i < 2500; i++) metrics.observeRequest('listUsers', 200, 0.003);
    for (let i = 0; i < 7; i++) metrics.observeRequest(undefined, 404, 0.0005);
    const text = await metrics.registry.metrics();
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="listUsers",status_class="2xx"}')).toBe(2500);
    expect(value(text, 'backoffice_http_request_duration_seconds_bucket{le="0.0025",operation="listUsers",status_class="2xx"}')).toBe(0);
    expect(value(text, 'backoffice_http_request_duration_seconds_bucket{le="0.005",operation="listUsers",status_class="2xx"}')).toBe(2500);
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="none",status_class="4xx"}')).toBe(7);
    // A second scrape adds nothing that was not observed since.
    const again = await metrics.registry.metrics();
    expect(value(again, 'backoffice_http_request_duration_seconds_count{operation="listUsers",status_class="2xx"}')).toBe(2500);
  });

  it('count requests by operationId and status class, and every outcome of sign-in, refresh and API keys', async () => {
    const clock = new ManualClock(new Date());
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock });
    const { app } = createTestApp(database.db, {
      clock,
      env: { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '2' },
      outcomes: metrics.outcomes,
      observeRequest: metrics.observeRequest,
    });
    const before = await metrics.registry.metrics();
    for (const outcome of ['succeeded', 'failed', 'throttled']) expect(value(before, `backoffice_sign_ins_total{outcome="${outcome}"}`)).toBe(0);

    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    const wrong = { session: { email: user.email, password: 'not the password at all' } };
    expect((await request(app).post('/sessions').send(wrong)).status).toBe(401);
    expect((await request(app).post('/sessions').send(wrong)).status).toBe(401);
    expect((await request(app).post('/sessions').send(wrong)).status).toBe(429);

    expect((await refresh(app, set)).status).toBe(201); // issued
    expect((await refresh(app, set)).status).toBe(201); // replayed, within the grace window
    clock.advance(60_000);
    expect((await refresh(app, set)).status).toBe(401); // reused: the session is revoked
    expect((await refresh(app, { access_token: 'nope', refresh_token: 'nope' })).status).toBe(401); // refused

    const key = await makeApiKey(database.db, ['users.list'], { clock, expiresAt: new Date(clock.now().getTime() + 3_600_000).toISOString() });
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200);
    expect((await request(app).get('/utilisateurs').set('x-api-key', key.secret)).status).toBe(200);
    expect((await request(app).get('/users').set('x-api-key', 'not a key')).status).toBe(401);
    clock.advance(2 * 3_600_000);
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(401);
    expect((await request(app).get('/livez')).status).toBe(200);

    const text = await metrics.registry.metrics();
    expect(value(text, 'backoffice_sign_ins_total{outcome="succeeded"}')).toBe(1);
    expect(value(text, 'backoffice_sign_ins_total{outcome="failed"}')).toBe(2);
    expect(value(text, 'backoffice_sign_ins_total{outcome="throttled"}')).toBe(1);
    expect(value(text, 'backoffice_token_refreshes_total{outcome="issued"}')).toBe(1);
    expect(value(text, 'backoffice_token_refreshes_total{outcome="replayed"}')).toBe(1);
    expect(value(text, 'backoffice_token_refreshes_total{outcome="reused"}')).toBe(1);
    expect(value(text, 'backoffice_token_refreshes_total{outcome="refused"}')).toBe(1);
    expect(value(text, 'backoffice_api_key_authentications_total{outcome="accepted"}')).toBe(2);
    expect(value(text, 'backoffice_api_key_authentications_total{outcome="invalid"}')).toBe(1);
    expect(value(text, 'backoffice_api_key_authentications_total{outcome="expired"}')).toBe(1);
    expect(value(text, 'backoffice_api_key_authentications_total{outcome="creator_disabled"}')).toBe(0);

    // By operationId (the French alias has its own), no raw path in any label.
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="listUsers",status_class="2xx"}')).toBe(1);
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="listUtilisateurs",status_class="2xx"}')).toBe(1);
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="listUsers",status_class="4xx"}')).toBe(2);
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="signIn",status_class="4xx"}')).toBe(3);
    expect(value(text, 'backoffice_http_request_duration_seconds_count{operation="none",status_class="2xx"}')).toBe(1);
    expect(value(text, 'backoffice_http_request_duration_seconds_bucket{le="10",operation="signIn",status_class="2xx"}')).toBe(1);
    expect(text).not.toContain('/users');
    expect(text).not.toContain('utilisateurs');
    expect(text).not.toContain(user.email);
    expect(text).not.toContain(key.id);
    expect(text).not.toContain(user.id);
  });

  it('reads the pool, the hashing threads and the audit seal lag when scraped', async () => {
    const clock = new ManualClock(new Date());
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock });
    await recordSecurityEvent(database.db, { type: 'sign_in_failed', at: clock.now(), userId: null, ip: '192.0.2.1', userAgent: '', details: { reason: 'unknown_email' } });
    clock.advance(90_000);
    const held = await database.pool.connect();
    try {
      const text = await metrics.registry.metrics();
      expect(value(text, 'backoffice_db_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(1);
      expect(value(text, 'backoffice_db_pool_waiting')).toBe(0);
      expect(value(text, 'backoffice_audit_seal_lag_seconds')).toBeGreaterThanOrEqual(90);
      expect(value(text, 'backoffice_password_hash_queue')).toBe(0);
      expect(text).toMatch(/^backoffice_password_hash_threads\{state="idle"\} \d+$/m);
      expect(text).toMatch(/^process_cpu_seconds_total \d/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
    } finally {
      held.release();
    }
  });
});

describe('the metrics listener', () => {
  it('serves GET /metrics on METRICS_PORT only, never on the public port', { timeout: 120_000 }, async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, METRICS_PORT: A_FREE_PORT, SWEEP_INTERVAL_S: '0' });
    const metricsPort = server.env.METRICS_PORT!;
    try {
      expect((await get(`${server.url}/readyz`)).status).toBe(200);
      const scraped = await get(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scraped.status).toBe(200);
      expect(scraped.type).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(value(scraped.text, 'backoffice_http_request_duration_seconds_count{operation="none",status_class="2xx"}')).toBeGreaterThanOrEqual(1);
      expect((await get(`${server.url}/metrics`)).status).toBe(404);
      expect((await get(`http://127.0.0.1:${metricsPort}/users`)).status).toBe(404);
      expect(server.output()).toContain(`metrics on http://127.0.0.1:${metricsPort}/metrics`);
    } finally {
      await server.stop();
    }
  });

  it('is off with METRICS_PORT=0; a bad port stops the start-up', () => {
    expect(testConfig({ METRICS_PORT: '0' }).metrics).toBeUndefined(); // main.ts starts no listener then
    expect(testConfig().metrics).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(() => testConfig({ METRICS_PORT: '70000' })).toThrow(/METRICS_PORT/);
  });
});
