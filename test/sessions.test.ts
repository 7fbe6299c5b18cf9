// Signing in (POST /sessions) and bearer authentication of later requests.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { hash } from '@node-rs/argon2';
import { generateSecret } from '../src/auth/secrets/secrets.js';
import { PERMISSIONS } from '../src/auth/permissions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('POST /sessions', () => {
  it('answers 201 with a no-store token set and records the session', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db);
    const res = await request(app)
      .post('/sessions')
      .set('user-agent', 'Firefox/132 '.repeat(100))
      .send({ session: { email: user.email.toUpperCase(), password: user.password } });
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
    expect(res.body.access_token).toMatch(/^boa_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
    expect(res.body.refresh_token).toMatch(/^bor_[0-9A-Za-z]{43}_[0-9A-Za-z]{6}$/);
    const session = await database.db.selectFrom('sessions').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
    expect(session.ip_address).toMatch(/127\.0\.0\.1|::1/);
    expect([...session.user_agent].length).toBe(512);
    expect(session.revoked_at).toBeNull();
    expect(session.refreshed_at).toBeNull();
    const stored = await database.db.selectFrom('users').select('last_sign_in_at').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(stored.last_sign_in_at).not.toBeNull();
  });

  it('answers unknown e-mail, wrong password and disabled account with the same 401 body', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db);
    const disabled = await createUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    const attempts = [
      { email: 'nobody-here@example.com', password: user.password },
      { email: user.email, password: 'not the right password' },
      { email: disabled.email, password: disabled.password },
    ];
    const bodies = [];
    for (const session of attempts) {
      const res = await request(app).post('/sessions').send({ session });
      expect(res.status).toBe(401);
      expectContractResponse(res, 'POST', '/sessions');
      expect(res.headers['www-authenticate']).toBe('Bearer realm="backoffice"');
      const { request_id: _id, ...body } = JSON.parse(res.text);
      bodies.push(body);
    }
    expect(bodies[0]).toEqual({
      type: 'urn:problem:backoffice:invalid_credentials',
      title: 'Invalid credentials',
      status: 401,
      detail: 'The e-mail address or the password is wrong.',
      code: 'invalid_credentials',
    });
    expect(bodies[1]).toEqual(bodies[0]);
    expect(bodies[2]).toEqual(bodies[0]);
  });

  it('answers 400 before hashing for missing fields, wrong types, extra properties and an over-long password', async () => {
    const { app } = createTestApp(database.db);
    const countRows = async () => ({
      failures: (await database.db.selectFrom('sign_in_failures').select('id').execute()).length,
      events: (await database.db.selectFrom('security_events').select('id').execute()).length,
    });
    const before = await countRows();
    const bad = [
      { session: { email: 'a@example.com' } },
      { session: { email: 'a@example.com', password: 12345678901234 } },
      { session: { email: 'a@example.com', password: 'x'.repeat(20), admin: true } },
      { session: { email: 'a@example.com', password: 'x'.repeat(129) } },
      { email: 'a@example.com', password: 'x'.repeat(20) },
    ];
    for (const body of bad) {
      const res = await request(app).post('/sessions').send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('validation_failed');
    }
    // None of the bad requests reached the service: no failure counted, no event recorded.
    expect(await countRows()).toEqual(before);
  });

  it('upgrades a hash made with other argon2 parameters at sign-in', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db);
    const weak = await hash(user.password, { algorithm: 2, memoryCost: 8192, timeCost: 1, parallelism: 1 });
    await database.db.updateTable('users').set({ password_hash: weak }).where('id', '=', user.id).execute();
    await signIn(app, user.email, user.password);
    const row = await database.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(row.password_hash).not.toBe(weak);
    expect(await hashPassword('x')).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });

  it('two sign-ins of one person at once, while the stored hash needs today\'s parameters: both open a session (the one whose rehash loses checks the hash the other stored)', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db);
    const weak = await hash(user.password, { algorithm: 2, memoryCost: 8192, timeCost: 1, parallelism: 1 });
    await database.db.updateTable('users').set({ password_hash: weak }).where('id', '=', user.id).execute();
    const send = () => request(app).post('/sessions').send({ session: { email: user.email, password: user.password } });
    const answers = await Promise.all([send(), send()]);
    expect(answers.map((res) => res.status)).toEqual([201, 201]);
    expect(await database.db.selectFrom('security_events').select('id').where('user_id', '=', user.id).where('type', '=', 'sign_in_failed').execute()).toEqual([]);
  });

  it('takes the client IP from X-Forwarded-For only behind a trusted proxy', async () => {
    const user = await createUser(database.db);
    const untrusted = createTestApp(database.db).app;
    await request(untrusted).post('/sessions').set('x-forwarded-for', '203.0.113.9').send({ session: { email: user.email, password: user.password } }).expect(201);
    const trusted = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } }).app;
    await request(trusted).post('/sessions').set('x-forwarded-for', '203.0.113.9').send({ session: { email: user.email, password: user.password } }).expect(201);
    const ips = (await database.db.selectFrom('sessions').select('ip_address').where('user_id', '=', user.id).orderBy('created_at').execute()).map((r) => r.ip_address);
    expect(ips).toHaveLength(2);
    expect(ips[0]).not.toBe('203.0.113.9');
    expect(ips).toContain('203.0.113.9');
  });
});

describe('bearer authentication', () => {
  it('accepts the access token (any case of the scheme name) and checks the permission from roles', async () => {
    const { app } = createTestApp(database.db);
    const reader = await createUser(database.db, { permissions: ['users.list'] });
    const nobody = await createUser(database.db);
    const readerSet = await signIn(app, reader.email, reader.password);
    const nobodySet = await signIn(app, nobody.email, nobody.password);
    const ok = await request(app).get('/users').set('authorization', `bEaReR ${readerSet.access_token}`);
    expect(ok.status).toBe(200);
    const denied = await request(app).get('/users').set('authorization', `Bearer ${nobodySet.access_token}`);
    expect(denied.status).toBe(403);
    expect(denied.body.required_permission).toBe('users.list');
    expectContractResponse(denied, 'GET', '/users');
  });

  it('grants every permission to the built-in admin role', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const set = await signIn(app, admin.email, admin.password);
    const me = await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`);
    expect(me.status).toBe(200);
    // The whole catalogue, whatever its size: a permission added later is the admin's too.
    expect([...me.body.permissions].sort()).toEqual([...PERMISSIONS].sort());
    await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`).expect(200);
  });

  it('accepts the access token until 600 s have passed, and refuses it exactly at 600 s', async () => {
    const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    clock.advance(599_999);
    await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`).expect(200);
    clock.advance(1);
    const res = await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="backoffice", error="invalid_token"');
  });

  it('keeps a session in use from idling out: its use is noted, at most once a minute', async () => {
    const clock = new ManualClock(new Date('2026-06-01T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { SESSION_IDLE_TIMEOUT_S: '200' } });
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    const lastUsed = async () => (await database.db.selectFrom('sessions').select('last_used_at').where('user_id', '=', user.id).executeTakeFirstOrThrow()).last_used_at.toISOString();
    const use = () => request(app).get('/users').set('authorization', `Bearer ${set.access_token}`);
    clock.advance(150_000);
    await use().expect(200);
    await vi.waitFor(async () => expect(await lastUsed()).toBe('2026-06-01T10:02:30.000Z'));
    clock.advance(150_000); // 300 s after sign-in, 150 s after the last use: still alive
    await use().expect(200);
    await vi.waitFor(async () => expect(await lastUsed()).toBe('2026-06-01T10:05:00.000Z'));
    clock.advance(30_000); // used again within the minute: nothing written
    await use().expect(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await lastUsed()).toBe('2026-06-01T10:05:00.000Z');
    clock.advance(171_000); // 201 s after the last noted use
    expect((await use()).status).toBe(401);
  });

  it('refuses malformed, unknown, disabled-user and revoked tokens with 401', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    const tampered = `${set.access_token.slice(0, -8)}AAAA${set.access_token.slice(-4)}`;
    const unknown = generateSecret('boa'); // well-formed, checksum right, never issued
    for (const token of ['garbage', tampered, unknown, set.refresh_token]) {
      const res = await request(app).get('/users').set('authorization', `Bearer ${token}`);
      expect(res.status, token).toBe(401);
      expect(res.body.code).toBe('invalid_token');
    }
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', user.id).execute();
    await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`).expect(401);
    await database.db.updateTable('users').set({ status: 'active' }).where('id', '=', user.id).execute();
    await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`).expect(200);
    await request(app).delete('/sessions/current').set('authorization', `Bearer ${set.access_token}`).expect(204);
    await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`).expect(401);
  });
});
