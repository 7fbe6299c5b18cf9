// Probes, the published reference, configuration errors and log redaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { loadConfig, ConfigError } from '../src/config.js';
import type { Database } from '../src/db/schema.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('probes', () => {
  it('/livez and /readyz answer 200 with a database', async () => {
    const { app } = createTestApp(database.db);
    expect((await request(app).get('/livez')).status).toBe(200);
    expect((await request(app).get('/readyz')).body).toEqual({ status: 'ok' });
  });

  it('/readyz answers a 503 problem without a database while /livez holds', async () => {
    // A pool pointed at a closed port: what the service sees when PostgreSQL is gone.
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:9/none', connectionTimeoutMillis: 500 });
    const unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const { app } = createTestApp(unreachable);
    const ready = await request(app).get('/readyz');
    expect(ready.status).toBe(503);
    expect(ready.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(ready.body.code).toBe('service_unavailable');
    expect((await request(app).get('/livez')).status).toBe(200);
    await unreachable.destroy();
  });

  it('answers 503 service_unavailable, not 500, when an operation cannot reach the database', async () => {
    const pool = new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:9/none', connectionTimeoutMillis: 500 });
    const unreachable = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const { app } = createTestApp(unreachable, {
      authenticators: {
        apiKey: async () => ({ kind: 'api_key', apiKeyId: 'k', permissions: new Set(['users.list']) }),
        bearer: async () => {
          throw new Error('unused');
        },
        stepUp: async () => {},
      },
    });
    const res = await request(app).get('/users').set('x-api-key', 'k');
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    await unreachable.destroy();
  });
});

describe('the published reference', () => {
  it('serves the bundled contract at /openapi.json', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body).toEqual(spec);
  });

  it('serves the Redoc page at /docs with no external script', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('Back-office API');
    expect(res.text).not.toMatch(/<script[^>]+src="https?:/);
  });
});

describe('configuration', () => {
  it('an operator\'s DATABASE_URL that does not parse (a `/` left unencoded in its password) is refused without printing the password', () => {
    const password = 'Sup3r/Secret-db-password';
    let message = '';
    try {
      loadConfig({ DATABASE_URL: `postgres://app:${password}@db.internal:5432/backoffice`, SEALING_KEYS: '' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/DATABASE_URL/);
    expect(message).not.toContain(password);
    expect(message).not.toContain('Sup3r');
  });

  it('attack: an SMTP_URL whose password holds a % left unencoded (50%off) is refused as configuration naming SMTP_URL, not thrown as "URI malformed", and never printed', () => {
    const attempt = () => loadConfig({ SMTP_URL: 'smtp://mailer:50%off@mail.example.com' });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (err) {
      expect((err as Error).message).toMatch(/SMTP_URL: .*percent-encoded/);
      expect((err as Error).message).not.toContain('50%off');
    }
  });

  it('names every bad variable in one message', () => {
    expect(() => loadConfig({ PORT: 'eighty', DB_POOL_MAX: 'many' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DB_POOL_MAX: 'many' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT/);
      expect((err as Error).message).toMatch(/DB_POOL_MAX/);
    }
  });

  it('defaults to the embedded database and to response validation outside production', () => {
    const config = loadConfig({});
    expect(config.databaseUrl).toBeUndefined();
    expect(config.validateResponses).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production', MAIL_OUTBOX_ONLY: 'true' }).validateResponses).toBe(false);
  });
});

describe('logs', () => {
  it('writes one structured line per request with its id, and never a credential', async () => {
    const { app, logs } = createTestApp(database.db);
    const secrets = ['boa_SECRETACCESS', 'bok_SECRETKEY', 'session=SECRETCOOKIE'];
    const first = await request(app).get('/users').set('authorization', `Bearer ${secrets[0]}`).set('x-request-id', 'log-test-1');
    await request(app).get('/users').set('x-api-key', secrets[1]!).set('cookie', secrets[2]!);
    await request(app).post('/sessions').send({ session: { email: 'a@b.co', password: 'hunter2-SECRETPASSWORD' } });
    const text = logs.text();
    for (const secret of [...secrets, 'SECRETPASSWORD']) expect(text).not.toContain(secret.split('_').pop());
    const line = logs.records().find((r) => (r.req as { id?: string } | undefined)?.id === first.headers['x-request-id']);
    expect(line).toMatchObject({ level: 30, req: { clientRequestId: 'log-test-1', method: 'GET', path: '/users' }, res: { statusCode: 401 } });
  });
});
