// The x-api-key path and API key management: lookup by digest, the 401s, rotation, revocation
// across processes, races on the name, and a secret that is never shown twice.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase, testPool } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { OPERATOR } from '../src/auth/authority.js';
import { ManualClock } from '../src/clock.js';
import { generateSecret } from '../src/auth/secrets/secrets.js';
import type { Database } from '../src/db/schema.js';
import { recordKeyUse } from '../src/api-keys/repository.js';

let database: TestDatabase;
let admin: { id: string };
beforeAll(async () => {
  database = await createTestDatabase();
  admin = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] });
});
afterAll(() => database.destroy());

const MINUTE = 60_000;
/** The same secret with its last checksum character changed. */
const badChecksum = (secret: string) => secret.slice(0, -1) + (secret.endsWith('x') ? 'y' : 'x');

describe('x-api-key authentication', () => {
  it('lets a key with the permission list users, and answers 403 naming the permission otherwise', async () => {
    const { app } = createTestApp(database.db);
    const allowed = await makeApiKey(database.db, ['users.list']);
    const ok = await request(app).get('/users').set('x-api-key', allowed.secret);
    expect(ok.status).toBe(200);
    expectContractResponse(ok, 'GET', '/users');

    const other = await makeApiKey(database.db, ['tasks.list']);
    const denied = await request(app).get('/users').set('x-api-key', other.secret);
    expect(denied.status).toBe(403);
    expect(denied.body).toMatchObject({ code: 'permission_denied', required_permission: 'users.list' });
    expectContractResponse(denied, 'GET', '/users');
  });

  it('refuses a malformed key without a database lookup, and an unknown well-formed one after it', async () => {
    const queries: string[] = [];
    const counting = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: database.pool }),
      log: (event) => void queries.push(event.query.sql),
    });
    const { app } = createTestApp(counting);
    for (const bad of ['nope', 'bok_short_x', badChecksum(generateSecret('bok')), generateSecret('boa')]) {
      const res = await request(app).get('/users').set('x-api-key', bad);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_api_key');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="backoffice", error="invalid_token"');
      expectContractResponse(res, 'GET', '/users');
    }
    expect(queries).toEqual([]);

    const unknown = await request(app).get('/users').set('x-api-key', generateSecret('bok'));
    expect(unknown.status).toBe(401);
    expect(unknown.body.code).toBe('invalid_api_key');
    expect(queries).toHaveLength(1);
    expect(queries[0]).toContain('"s"."digest" = $1');
  });

  it('answers 401 api_key_expired once the expiration date has passed', async () => {
    const clock = new ManualClock(new Date());
    const key = await makeApiKey(database.db, ['users.list'], { clock, expiresAt: new Date(clock.now().getTime() + 10 * MINUTE).toISOString() });
    const { app } = createTestApp(database.db, { clock });
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200);
    clock.advance(10 * MINUTE);
    const res = await request(app).get('/users').set('x-api-key', key.secret);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('api_key_expired');
    expectContractResponse(res, 'GET', '/users');
  });

  it('records the last use (time and IP) at most once a minute per key, without delaying the answer', async () => {
    const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
    const key = await makeApiKey(database.db, ['users.list'], { clock });
    const { app } = createTestApp(database.db, { clock });
    const lastUsed = () => database.db.selectFrom('api_keys').select(['last_used_at', 'last_used_ip']).where('id', '=', key.id).executeTakeFirstOrThrow();

    await request(app).get('/users').set('x-api-key', key.secret);
    await vi.waitFor(async () => expect((await lastUsed()).last_used_at?.toISOString()).toBe('2026-06-01T10:00:00.000Z'));
    expect((await lastUsed()).last_used_ip).toMatch(/127\.0\.0\.1|::1/);

    clock.advance(30_000);
    await request(app).get('/users').set('x-api-key', key.secret);
    await new Promise((r) => setTimeout(r, 200));
    expect((await lastUsed()).last_used_at?.toISOString()).toBe('2026-06-01T10:00:00.000Z');

    clock.advance(30_000);
    await request(app).get('/users').set('x-api-key', key.secret);
    await vi.waitFor(async () => expect((await lastUsed()).last_used_at?.toISOString()).toBe('2026-06-01T10:01:00.000Z'));
  });

  it('writes the last use once even when many requests of the minute race', async () => {
    const clock = new ManualClock(new Date('2026-06-02T10:00:00.000Z'));
    const key = await makeApiKey(database.db, ['users.list'], { clock });
    const updates: string[] = [];
    const counting = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: database.pool }),
      log: (event) => void (event.query.sql.startsWith('update "api_keys"') && updates.push(event.query.sql)),
    });
    const { app } = createTestApp(counting, { clock });
    await Promise.all(Array.from({ length: 8 }, () => request(app).get('/users').set('x-api-key', key.secret)));
    await vi.waitFor(async () => {
      const row = await database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow();
      expect(row.last_used_at?.toISOString()).toBe('2026-06-02T10:00:00.000Z');
    });
    // Requests that read the key before any write may each try; the conditional UPDATE lets one through.
    const at = new Date('2026-06-02T10:00:30.000Z');
    const written = await Promise.all(Array.from({ length: 8 }, () => recordKeyUse(database.db, key.id, { at, ip: '10.0.0.1', intervalMs: 60_000 })));
    expect(written.filter(Boolean)).toHaveLength(0);
    const later = new Date('2026-06-02T10:01:00.000Z');
    const racing = await Promise.all(Array.from({ length: 8 }, () => recordKeyUse(database.db, key.id, { at: later, ip: '10.0.0.1', intervalMs: 60_000 })));
    expect(racing.filter(Boolean)).toHaveLength(1);
    clock.advance(10_000);
    updates.length = 0;
    await Promise.all(Array.from({ length: 8 }, () => request(app).get('/users').set('x-api-key', key.secret)));
    await new Promise((r) => setTimeout(r, 200));
    expect(updates).toEqual([]); // within the minute, not even an attempt
  });
});

describe('revocation', () => {
  it('is effective on the very next request of another server process on the same database', async () => {
    // A second process: its own pool, its own app, nothing shared but the database.
    const otherPool = testPool({ connectionString: database.url, max: 2 });
    const otherDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool: otherPool }) });
    try {
      const key = await makeApiKey(database.db, ['users.list']);
      const { app: second } = createTestApp(otherDb);
      expect((await request(second).get('/users').set('x-api-key', key.secret)).status).toBe(200);

      const { app: first } = createAppWithTestBearer(database.db);
      const revoked = await request(first).delete(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
      expect(revoked.status).toBe(204);

      const res = await request(second).get('/users').set('x-api-key', key.secret);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_api_key');
      expectContractResponse(res, 'GET', '/users');
      const again = await request(first).delete(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
      expect(again.status).toBe(204); // idempotent
    } finally {
      await otherDb.destroy();
    }
  });
});

describe('rotation', () => {
  it('without a grace period, the old secret stops at once and the new one works', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = await makeApiKey(database.db, ['users.list']);
    const res = await request(app).post(`/api-keys/${key.id}/rotate`).set('authorization', testBearer(admin.id)).send({});
    expect(res.status).toBe(200);
    expectContractResponse(res, 'POST', `/api-keys/${key.id}/rotate`);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.secret).not.toBe(key.secret);
    expect(res.body.api_key.last_characters).toBe(res.body.secret.slice(-4));
    expect((await request(app).get('/users').set('x-api-key', key.secret)).body.code).toBe('invalid_api_key');
    expect((await request(app).get('/users').set('x-api-key', res.body.secret)).status).toBe(200);
  });

  it('with a grace period, both secrets work until it ends, then only the new one', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = await makeApiKey(database.db, ['users.list'], { clock });
    const res = await request(app).post(`/api-keys/${key.id}/rotate`).set('authorization', testBearer(admin.id)).send({ grace_period_seconds: 3600 });
    expect(res.status).toBe(200);
    const fresh = res.body.secret as string;
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200);
    expect((await request(app).get('/users').set('x-api-key', fresh)).status).toBe(200);
    clock.advance(3600 * 1000);
    const old = await request(app).get('/users').set('x-api-key', key.secret);
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('invalid_api_key');
    expect((await request(app).get('/users').set('x-api-key', fresh)).status).toBe(200);
  });

  it('refuses a grace period over 24 hours, and rotating a revoked key', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = await makeApiKey(database.db, ['users.list']);
    const tooLong = await request(app).post(`/api-keys/${key.id}/rotate`).set('authorization', testBearer(admin.id)).send({ grace_period_seconds: 86401 });
    expect(tooLong.status).toBe(400);
    expectContractResponse(tooLong, 'POST', `/api-keys/${key.id}/rotate`);
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200); // nothing changed
    await key.service.revoke(OPERATOR, key.id);
    const res = await request(app).post(`/api-keys/${key.id}/rotate`).set('authorization', testBearer(admin.id)).send({});
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('api_key_revoked');
  });
});

describe('managing keys', () => {
  it('creates a key limited to the creator\u2019s permissions (403 otherwise), with a future expiry (400 otherwise)', async () => {
    const role = await makeRole(database.db, ['api_keys.manage', 'users.list']);
    const manager = await makeUser(database.db, { roleIds: [role.id] });
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(manager.id);

    const wider = await request(app).post('/api-keys').set('authorization', auth).send({ name: 'Too wide', permissions: ['users.list', 'users.create'] });
    expect(wider.status).toBe(403);
    expect(wider.body.required_permission).toBe('users.create');
    expectContractResponse(wider, 'POST', '/api-keys');

    const past = await request(app).post('/api-keys').set('authorization', auth).send({ name: 'Past', permissions: ['users.list'], expires_at: '2020-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
    expect(past.body.code).toBe('expiration_in_past');
    expectContractResponse(past, 'POST', '/api-keys');

    const count = await database.db.selectFrom('api_keys').select((eb) => eb.fn.countAll<number>().as('n')).where('name', 'in', ['Too wide', 'Past']).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);

    const created = await request(app).post('/api-keys').set('authorization', auth).send({ name: 'Reporting', permissions: ['users.list'] });
    expect(created.status).toBe(201);
    expectContractResponse(created, 'POST', '/api-keys');
    expect(created.body.api_key).toMatchObject({ name: 'Reporting', created_by: manager.id, never_expires: true, permissions: ['users.list'] });
    expect(created.body.secret).toMatch(/^bok_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
  });

  it('answers 409 to a duplicate name, case aside, even when two creations race; one key is made', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(admin.id);
    const results = await Promise.all(
      ['Race Key', 'race key', 'RACE KEY', 'Race key'].map((name) => request(app).post('/api-keys').set('authorization', auth).send({ name, permissions: ['users.list'] })),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.body.code).toBe('name_taken');
      expectContractResponse(r, 'POST', '/api-keys');
    }
    const rows = await database.db.selectFrom('api_keys').select('id').where((eb) => eb(eb.fn('lower', ['name']), '=', 'race key')).execute();
    expect(rows).toHaveLength(1);
    const secrets = await database.db.selectFrom('api_key_secrets').select('api_key_id').where('api_key_id', '=', rows[0]!.id).execute();
    expect(secrets).toHaveLength(1);
  });

  it('renames, changes the expiry and narrows permissions, but never widens them', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(admin.id);
    const key = await makeApiKey(database.db, ['users.list', 'users.read']);
    const widen = await request(app).patch(`/api-keys/${key.id}`).set('authorization', auth).send({ permissions: ['users.list', 'users.create'] });
    expect(widen.status).toBe(400);
    expect(widen.body.code).toBe('permissions_not_narrowed');
    const res = await request(app)
      .patch(`/api-keys/${key.id}`)
      .set('authorization', auth)
      .send({ name: 'Renamed', permissions: ['users.read'], expires_at: '2099-01-01T00:00:00.000Z' });
    expect(res.status).toBe(200);
    expectContractResponse(res, 'PATCH', `/api-keys/${key.id}`);
    expect(res.body).toMatchObject({ name: 'Renamed', permissions: ['users.read'], expires_at: '2099-01-01T00:00:00.000Z', never_expires: false });
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(403);
  });

  it('lists keys expiring within a number of days, and flags keys without expiry', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const day = 86_400_000;
    const soon = await makeApiKey(database.db, ['users.list'], { clock, expiresAt: new Date(clock.now().getTime() + 3 * day).toISOString() });
    const later = await makeApiKey(database.db, ['users.list'], { clock, expiresAt: new Date(clock.now().getTime() + 60 * day).toISOString() });
    const res = await request(app).get('/api-keys?expiring_within_days=7').set('authorization', testBearer(admin.id));
    expect(res.status).toBe(200);
    expectContractResponse(res, 'GET', '/api-keys');
    const ids = res.body.data.map((k: { id: string }) => k.id);
    expect(ids).toContain(soon.id);
    expect(ids).not.toContain(later.id);
    const all = await request(app).get('/api-keys').set('authorization', testBearer(admin.id));
    expect(all.body.data.find((k: { id: string }) => k.id === later.id).never_expires).toBe(false);
    expect(all.body.data.some((k: { never_expires: boolean }) => k.never_expires)).toBe(true);
  });

  it('refuses API keys on key management, even a key holding api_keys.manage', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = await makeApiKey(database.db, ['api_keys.manage', 'users.list']);
    for (const [method, path] of [['get', '/api-keys'], ['post', '/api-keys'], ['delete', `/api-keys/${key.id}`]] as const) {
      const res = await request(app)[method](path).set('x-api-key', key.secret).send(method === 'post' ? { name: 'x', permissions: ['users.list'] } : undefined);
      expect(res.status, `${method} ${path}`).toBe(401);
      expectContractResponse(res, method, path);
    }
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200); // not revoked by any of that
  });
});

describe('a secret is shown once', () => {
  it('never appears again: not in later responses, not in the database, not in the logs', async () => {
    const { app, logs } = createAppWithTestBearer(database.db);
    const auth = testBearer(admin.id);
    const created = await request(app).post('/api-keys').set('authorization', auth).send({ name: 'Shown once', permissions: ['users.list'] });
    const secret = created.body.secret as string;
    const id = created.body.api_key.id as string;
    const body = secret.split('_')[1]!;
    await request(app).get('/users').set('x-api-key', secret); // used once: it goes through the logger too
    const rotated = await request(app).post(`/api-keys/${id}/rotate`).set('authorization', auth).send({ grace_period_seconds: 60 });
    const second = rotated.body.secret as string;

    const later = [
      await request(app).get('/api-keys').set('authorization', auth),
      await request(app).get(`/api-keys/${id}`).set('authorization', auth),
      await request(app).patch(`/api-keys/${id}`).set('authorization', auth).send({ name: 'Shown once, renamed' }),
      await request(app).delete(`/api-keys/${id}`).set('authorization', auth),
    ];
    for (const res of later) {
      expect(res.text).not.toContain(body);
      expect(res.text).not.toContain(second.split('_')[1]!);
    }
    expect(rotated.text).not.toContain(body);

    // Every column of both tables, as text (the digests as escaped bytes).
    const dump = await sql<{ row: string }>`
      select row_to_json(k)::text || encode(s.digest, 'escape') as row
      from api_keys k join api_key_secrets s on s.api_key_id = k.id where k.id = ${id}`.execute(database.db);
    const text = dump.rows.map((r) => r.row).join('\n');
    expect(dump.rows.length).toBe(2); // the new secret and the old one in its grace period
    for (const s of [secret, second]) {
      expect(text).not.toContain(s.split('_')[1]!);
      expect(text).not.toContain(s.split('_')[1]!.slice(4, 20));
    }
    const logText = logs.text();
    expect(logText.length).toBeGreaterThan(0);
    for (const s of [secret, second]) expect(logText).not.toContain(s.split('_')[1]!);
  });
});
