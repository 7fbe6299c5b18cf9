// Attacks on the changes of 2026-12-08 (the admin role's fixed id, request ids from trusted proxies
// only, authority judged on locked rows, the roles page), run on the real service and PostgreSQL.
// Each test is named after the attack; every one here holds (a regression test).
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Migrator, sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { HttpClient } from './support/http-client.js';
import { migrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/passwords.js';
import { systemClock } from '../src/clock.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('request ids: secrets and spoofing', () => {
  /** A caller's secrets of every kind: an API key, an access token, a refresh token. */
  async function secretsOfACaller(app: Parameters<typeof request>[0]) {
    const key = await makeApiKey(database.db, ['users.list']);
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    return { 'API key': key.secret, 'access token': set.access_token, 'refresh token': set.refresh_token };
  }

  it('secret in the access log: a caller sending its own API key or token as X-Request-Id does not get it logged, answered or recorded', async () => {
    for (const env of [{}, { TRUST_PROXY: 'loopback' }] as Record<string, string>[]) {
      const { app, logs } = createTestApp(database.db, { clock: systemClock, env });
      for (const [what, secret] of Object.entries(await secretsOfACaller(app))) {
        // As the id itself, and inside a longer, sane-looking one.
        for (const sent of [secret, `trace:${secret}`, `${secret}.1`]) {
          const res = await request(app).get('/users').set('x-api-key', (await makeApiKey(database.db, ['users.list'])).secret).set('x-request-id', sent);
          expect(res.status, `${what} ${JSON.stringify(env)}`).toBe(200);
          expect(res.headers['x-request-id'], `${what} ${JSON.stringify(env)}`).toMatch(UUID);
        }
        // The body of the secret (its random part) appears in no log line.
        expect(logs.text(), `${what} ${JSON.stringify(env)}`).not.toContain(secret.split('_')[1]);
      }
      // A sign-in (which records an event with the request id) sent with a secret as its id.
      const user = await createUser(database.db);
      const mine = await signIn(app, user.email, user.password);
      const again = await request(app).post('/sessions').set('x-request-id', mine.access_token).send({ session: { email: user.email, password: user.password } });
      expect(again.status).toBe(201);
      expect(await database.db.selectFrom('security_events').select('id').where('request_id', 'like', `%${mine.access_token.split('_')[1]!}%`).execute()).toEqual([]);
      expect(logs.text()).not.toContain(mine.access_token.split('_')[1]);
    }
  });

  it('the secret filter is not a blanket one: trace ids that are no secret of ours are still logged, and still taken from a trusted proxy', async () => {
    const { app, logs } = createTestApp(database.db);
    for (const sent of ['bok_not-a-secret_trace', 'f'.repeat(64), `${'a'.repeat(42)}-${'b'.repeat(44)}`]) {
      const res = await request(app).get('/livez').set('x-request-id', sent);
      const line = logs.records().find((r) => r.msg === 'request completed' && (r.req as { id?: string }).id === res.headers['x-request-id']);
      expect(line!.req).toMatchObject({ clientRequestId: sent });
    }
    const behindProxy = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } }).app;
    for (const sent of ['f3b1c0de9a8b7c6d5e4f30211a2b3c4d', 'e'.repeat(64)]) {
      expect((await request(behindProxy).get('/livez').set('x-request-id', sent)).headers['x-request-id']).toBe(sent);
    }
  });

  it('header smuggling: two X-Request-Id headers (the proxy\u2019s and a client\u2019s passed along) are not taken, even from a trusted proxy', async () => {
    const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      // Raw bytes, so both header lines reach the server as sent.
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.end('GET /livez HTTP/1.1\r\nHost: x\r\nX-Request-Id: proxy-id\r\nX-Request-Id: chosen-by-client\r\nConnection: close\r\n\r\n');
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk) => (text += String(chunk)));
        socket.on('close', () => resolve(text));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect(/\r\nx-request-id: ([^\r]*)\r\n/i.exec(answer)?.[1]).toMatch(UUID);
      expect(logs.text()).not.toContain('chosen-by-client');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('verdict leak between connections: a trusted proxy\u2019s open connection does not make another peer\u2019s connection trusted, nor the reverse', async () => {
    // 127.0.0.1 is the proxy; 127.0.0.2 (also loopback, but not named) is anyone else.
    const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: '127.0.0.1' } });
    const server = app.listen(0, '0.0.0.0');
    await new Promise((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const proxy = new HttpClient(url, 1);
    const stranger = new HttpClient(url, 1);
    try {
      const idFrom = async (client: HttpClient, localAddress: string, sent: string) =>
        String((await client.send({ method: 'GET', path: '/livez', headers: { 'x-request-id': sent, 'x-forwarded-for': '127.0.0.1' } }, { localAddress })).headers['x-request-id']);
      // Interleaved on two kept-alive connections, in both orders, several times each.
      for (let i = 0; i < 3; i++) {
        expect(await idFrom(stranger, '127.0.0.2', `stranger-${i}`)).toMatch(UUID);
        expect(await idFrom(proxy, '127.0.0.1', `proxy-${i}`)).toBe(`proxy-${i}`);
      }
      expect(proxy.agent.sockets, 'one kept-alive connection each').toBeDefined();
      // A new connection from the stranger after the proxy's verdict was cached.
      const fresh = new HttpClient(url, 1);
      expect(await idFrom(fresh, '127.0.0.2', 'fresh-stranger')).toMatch(UUID);
      fresh.close();
      expect(logs.text()).toContain('"clientRequestId":"fresh-stranger"');
    } finally {
      proxy.close();
      stranger.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('migration 20261208T1000_admin_role_id on existing databases', () => {
  const MIGRATION = '20261208T1000_admin_role_id';
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));

  /** A database migrated up to just before the migration, with `prepare` applied to it. */
  async function oldDatabase() {
    const old = await createTestDatabase({ empty: true });
    const { error } = await new Migrator({ db: old.db, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
    return old;
  }

  async function personHolding(db: TestDatabase['db'], roleIds: string[]) {
    const password = 'a long enough passphrase 1234';
    const email = `holder-${Math.random()}@example.com`;
    const { id } = await db.insertInto('users').values({ email, first_name: 'Role', last_name: 'Holder', password_hash: await hashPassword(password) }).returning('id').executeTakeFirstOrThrow();
    if (roleIds.length) await db.insertInto('user_roles').values(roleIds.map((role_id) => ({ user_id: id, role_id }))).execute();
    return { id, email, password };
  }

  async function permissionsOf(db: TestDatabase['db'], who: { email: string; password: string }) {
    const { app } = createTestApp(db);
    const { access_token } = await signIn(app, who.email, who.password);
    const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`);
    expect(me.status, me.text).toBe(200);
    return [...(me.body.permissions as string[])].sort();
  }

  it('admin role renamed before the migration: its holders, who were not administrators, do not become ones, and the migration applies', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      // Renamed in the database (the API refuses): by the rule of the time, no longer the admin role.
      const { id: renamed } = await db.updateTable('roles').set({ name: 'superusers' }).where('built_in', '=', true).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('role_permissions').values({ role_id: renamed, permission: 'users.list' }).execute();
      const real = await db.insertInto('roles').values({ name: 'ops' }).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('role_permissions').values({ role_id: real.id, permission: 'roles.manage' }).execute();
      const holder = await personHolding(db, [renamed]);
      const other = await personHolding(db, [real.id]);
      const heldBefore = await permissionsOf(db, holder);
      expect(heldBefore).toEqual(['users.list']);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      expect(await permissionsOf(db, holder)).toEqual(heldBefore);
      expect(await permissionsOf(db, other)).toEqual(['roles.manage']);
      // No role carries the admin id; none is built in.
      expect(await db.selectFrom('roles').select('id').where((eb) => eb.or([eb('id', '=', ADMIN_ROLE_ID), eb('built_in', '=', true)])).execute()).toEqual([]);
    } finally {
      await old.destroy();
    }
  });

  it('a second role named admin (the built-in one renamed, a plain one named admin since): neither\u2019s holders become administrators', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      const { id: builtIn } = await db.updateTable('roles').set({ name: 'root' }).where('built_in', '=', true).returning('id').executeTakeFirstOrThrow();
      const impostor = await db.insertInto('roles').values({ name: 'admin' }).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('role_permissions').values({ role_id: impostor.id, permission: 'tasks.list' }).execute();
      const ofImpostor = await personHolding(db, [impostor.id]);
      const ofRoot = await personHolding(db, [builtIn]);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      expect(await permissionsOf(db, ofImpostor)).toEqual(['tasks.list']);
      expect(await permissionsOf(db, ofRoot)).toEqual([]);
      const admins = await db.selectFrom('user_roles').select('user_id').where('role_id', '=', ADMIN_ROLE_ID).execute();
      expect(admins).toEqual([]);
    } finally {
      await old.destroy();
    }
  });

  it('admin role deleted before the migration: the migration applies, and a role named admin made afterwards grants only its own permissions', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      await db.deleteFrom('roles').where('built_in', '=', true).execute();
      expect(await migrateToLatest(db)).toContain(MIGRATION);
      const { app } = createTestApp(db);
      const key = await makeApiKey(db, ['roles.manage', 'users.list']);
      const made = await request(app).post('/roles').set('x-api-key', key.secret).send({ name: 'admin', permissions: ['users.list'] });
      expect(made.status, made.text).toBe(201);
      expect(made.body).toMatchObject({ built_in: false, permissions: ['users.list'] });
      expect(made.body.id).not.toBe(ADMIN_ROLE_ID);
      const holder = await personHolding(db, [made.body.id as string]);
      expect(await permissionsOf(db, holder)).toEqual(['users.list']);
    } finally {
      await old.destroy();
    }
  });

  it('a new built-in role or a role taking the admin id is refused by the database; the API cannot set either', async () => {
    const { db } = database;
    await expect(db.insertInto('roles').values({ name: `fake-admin-${Math.random()}`, built_in: true }).execute()).rejects.toMatchObject({ code: '23514' });
    await expect(sql`update roles set built_in = false where id = ${ADMIN_ROLE_ID}`.execute(db)).rejects.toMatchObject({ code: '23514' });
    const { app } = createTestApp(db);
    const key = await makeApiKey(db, ['roles.manage', 'users.list']);
    for (const body of [
      { name: `built-${Math.random()}`, permissions: [], built_in: true },
      { name: `with-id-${Math.random()}`, permissions: [], id: ADMIN_ROLE_ID },
    ]) {
      const res = await request(app).post('/roles').set('x-api-key', key.secret).send(body);
      expect(res.status, res.text).toBe(400);
    }
    // The admin role, renamed in the database, is still the admin role and still cannot be changed.
    const res = await request(app).patch(`/roles/${ADMIN_ROLE_ID}`).set('x-api-key', key.secret).send({ name: 'renamed-admin' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('role_built_in');
    expect(PERMISSIONS.length).toBeGreaterThan(0);
  });
});
