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
import { steppedUp } from './support/second-factor.js';
import { makeApiKey, makeRole, makeUser } from './support/access-fixtures.js';
import { HttpClient } from './support/http-client.js';
import { migrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { systemClock } from '../src/clock.js';
import { roleRow } from './support/rows.js';

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
    // 127.0.0.1 is the proxy; 127.0.0.2 (also loopback, but not named) is anyone else. On an IPv6
    // socket both arrive as IPv4-mapped addresses (::ffff:127.0.0.x).
    for (const host of ['0.0.0.0', '::']) {
      const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: '127.0.0.1' } });
      const server = app.listen(0, host);
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const proxy = new HttpClient(url, 1);
      const stranger = new HttpClient(url, 1);
      try {
        const idFrom = async (client: HttpClient, localAddress: string, sent: string) =>
          String((await client.send({ method: 'GET', path: '/livez', headers: { 'x-request-id': sent, 'x-forwarded-for': '127.0.0.1' } }, { localAddress })).headers['x-request-id']);
        // Interleaved on two kept-alive connections, in both orders, several times each.
        for (let i = 0; i < 3; i++) {
          expect(await idFrom(stranger, '127.0.0.2', `stranger-${i}`), host).toMatch(UUID);
          expect(await idFrom(proxy, '127.0.0.1', `proxy-${i}`), host).toBe(`proxy-${i}`);
        }
        // A new connection from the stranger after the proxy's verdict was cached.
        const fresh = new HttpClient(url, 1);
        expect(await idFrom(fresh, '127.0.0.2', 'fresh-stranger'), host).toMatch(UUID);
        fresh.close();
        expect(logs.text()).toContain('"clientRequestId":"fresh-stranger"');
      } finally {
        proxy.close();
        stranger.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
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

  /** A user holding the roles, written as the schema before (`migrated`: after) the migrations has it. */
  async function personHolding(db: TestDatabase['db'], roleIds: string[], { migrated = false } = {}) {
    const password = 'a long enough passphrase 1234';
    const email = `holder-${Math.random()}@example.com`;
    const hash = await hashPassword(password);
    const [{ id }] = (
      migrated
        ? await sql<{ id: string }>`insert into users (email, email_key, first_name, last_name, password_hash) values (${email}, ${email}, 'Role', 'Holder', ${hash}) returning id`.execute(db)
        : await sql<{ id: string }>`insert into users (email, first_name, last_name, password_hash) values (${email}, 'Role', 'Holder', ${hash}) returning id`.execute(db)
    ).rows as [{ id: string }];
    if (roleIds.length) await db.insertInto('user_roles').values(roleIds.map((role_id) => ({ user_id: id, role_id }))).execute();
    return { id, email, password };
  }

  /** A role as the schema before the migration has it (no name_key yet). */
  const oldRole = async (db: TestDatabase['db'], name: string) =>
    (await sql<{ id: string }>`insert into roles (name) values (${name}) returning id`.execute(db)).rows[0]!;

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
      const real = await oldRole(db, 'ops');
      await db.insertInto('role_permissions').values({ role_id: real.id, permission: 'roles.manage' }).execute();
      const holder = await personHolding(db, [renamed]);
      const other = await personHolding(db, [real.id]);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      // What the role granted by the rule of the time (the renamed role was no longer the admin role).
      expect(await permissionsOf(db, holder)).toEqual(['users.list']);
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
      const impostor = await oldRole(db, 'admin');
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
      const holder = await personHolding(db, [made.body.id as string], { migrated: true });
      expect(await permissionsOf(db, holder)).toEqual(['users.list']);
    } finally {
      await old.destroy();
    }
  });

  it('a new built-in role or a role taking the admin id is refused by the database; the API cannot set either', async () => {
    const { db } = database;
    await expect(db.insertInto('roles').values(roleRow({ name: `fake-admin-${Math.random()}`, built_in: true })).execute()).rejects.toMatchObject({ code: '23514' });
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

describe('the admin role known by its id: attacks on the name', () => {
  it('name squatting: with the admin role renamed in the database, a role named admin makes nobody an administrator (bearer, key, last-admin)', async () => {
    const own = await createTestDatabase();
    try {
      const { db } = own;
      const { app } = createTestApp(db);
      await db.updateTable('roles').set(roleRow({ name: 'root' })).where('id', '=', ADMIN_ROLE_ID).execute();
      const manager = await createUser(db, { permissions: ['roles.manage', 'users.update', 'api_keys.manage', 'users.list'] });
      const managerSet = await signIn(app, manager.email, manager.password);
      await steppedUp(app, managerSet.access_token, manager.password); // creating a key below is a sensitive change
      const managerAuth = `Bearer ${managerSet.access_token}`;
      const made = await request(app).post('/roles').set('authorization', managerAuth).send({ name: 'admin', permissions: ['users.list'] });
      expect(made.status, made.text).toBe(201);
      const granted = await request(app).patch(`/users/${manager.id}`).set('authorization', managerAuth).send({ roles: [`role-${manager.id}`, 'admin'] });
      expect(granted.status, granted.text).toBe(200);
      // The bearer lookup: no new permission.
      const me = await request(app).get('/me').set('authorization', managerAuth);
      expect([...me.body.permissions].sort()).toEqual(['api_keys.manage', 'roles.manage', 'users.list', 'users.update']);
      // The key lookup: a key the manager makes is worth what the manager holds, not more.
      const key = await request(app).post('/api-keys').set('authorization', managerAuth).send({ name: 'squat', permissions: ['users.list'] });
      expect(key.status, key.text).toBe(201);
      await db.updateTable('api_keys').set({ permissions: ['users.list', 'users.create'] }).where('id', '=', key.body.api_key.id).execute();
      expect((await request(app).post('/users').set('x-api-key', key.body.secret).send({ email: 'squat@example.com', first_name: 'S', last_name: 'Q' })).status).toBe(403);
      // The last-admin check: the only holder of the real admin role (now named root) stays.
      const root = await createUser(db, { roles: ['root'] });
      const rootAuth = `Bearer ${(await signIn(app, root.email, root.password)).access_token}`;
      expect([...(await request(app).get('/me').set('authorization', rootAuth)).body.permissions].sort()).toEqual([...PERMISSIONS].sort());
      const others = await db.selectFrom('user_roles').select('user_id').where('role_id', '=', ADMIN_ROLE_ID).execute();
      for (const { user_id } of others) if (user_id !== root.id) await db.deleteFrom('user_roles').where('user_id', '=', user_id).where('role_id', '=', ADMIN_ROLE_ID).execute();
      const demote = await request(app).patch(`/users/${root.id}`).set('authorization', rootAuth).send({ roles: ['admin'] });
      expect(demote.status, demote.text).toBe(409);
      expect(demote.body.code).toBe('last_admin');
    } finally {
      await own.destroy();
    }
  });
});

// Deadlocks an attacker could provoke: two requests taking the same rows in opposite orders make
// PostgreSQL abort one of them (40P01), a 500. Every rights-changing operation is run for real
// while another transaction, taking the locks another operation takes in the order the service
// takes them (mirrored below, as test/escalation.test.ts mirrors an administrator's change), holds
// the first k of them; once the request answered or waits for a lock, that transaction takes the
// rest, then rolls back. Any cycle shows as a deadlock error on one side or a 500 on the other.
describe('deadlocks: every pair of rights-changing operations, in every lock order', () => {
  type Step = [string, unknown[]];
  interface Fixture {
    /** The target user (holds role r), signed in once (session, set), and a role r2 it does not hold. */
    user: { id: string; email: string; password: string };
    session: string;
    set: { access_token: string; refresh_token: string };
    r: { id: string; name: string };
    r2: { id: string; name: string };
    /** Another administrator, for the last-admin lock. */
    otherAdmin: string;
  }

  let app: ReturnType<typeof createTestApp>['app'];
  let adminAuth: string;
  beforeAll(async () => {
    app = createTestApp(database.db).app;
    const admin = await createUser(database.db, { roles: ['admin'] });
    adminAuth = `Bearer ${(await signIn(app, admin.email, admin.password)).access_token}`;
  });

  // Hundreds of fixtures: their users share one password, hashed once (a hash is the slowest step
  // of a fixture on a loaded machine, and what is under test here is locking, not hashing); the
  // other administrator never signs in and has none. The sign-in stays real.
  const PASSWORD = 'a long password shared by the lock fixtures';
  let passwordHash: Promise<string> | undefined;

  async function fixture(targetIsAdmin: boolean): Promise<Fixture> {
    const r = await makeRole(database.db, ['tasks.list']);
    const r2 = await makeRole(database.db, ['users.list']);
    passwordHash ??= hashPassword(PASSWORD);
    const made = await makeUser(database.db, { roleIds: targetIsAdmin ? [r.id, ADMIN_ROLE_ID] : [r.id], passwordHash: await passwordHash });
    const user = { ...made, password: PASSWORD };
    const set = await signIn(app, user.email, user.password);
    const { id: session } = await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
    const otherAdmin = (await makeUser(database.db, { roleIds: [ADMIN_ROLE_ID] })).id;
    return { user, session, set, r, r2, otherAdmin };
  }

  const rolesOfUserForShare = 'select r.id from roles r join user_roles ur on ur.role_id = r.id where ur.user_id = $1 for share of r';
  const revokeAll = "update sessions set revoked_at = now(), revoked_reason = 'x' where user_id = $1 and revoked_at is null and ended_at is null";
  /** Each operation's locks and writes, in the service's order. */
  const SIDE: Record<string, (f: Fixture) => Step[]> = {
    'disabling the user': (f) => [
      ['select id from users where id = $1 for update', [f.user.id]],
      [rolesOfUserForShare, [f.user.id]],
      ["update users set status = 'disabled', updated_at = now() where id = $1", [f.user.id]],
      [revokeAll, [f.user.id]],
    ],
    'revoking the user\u2019s sessions': (f) => [
      ['select id from users where id = $1 for share', [f.user.id]],
      [rolesOfUserForShare, [f.user.id]],
      [revokeAll, [f.user.id]],
    ],
    'granting the user a role': (f) => [
      ['select id from users where id = $1 for update', [f.user.id]],
      [rolesOfUserForShare, [f.user.id]],
      ['select id from roles where lower(name) in ($1, $2) for share', [f.r.name, f.r2.name]],
      ['update users set updated_at = now() where id = $1', [f.user.id]],
      ['delete from user_roles where user_id = $1', [f.user.id]],
      ['insert into user_roles (user_id, role_id) values ($1, $2), ($1, $3)', [f.user.id, f.r.id, f.r2.id]],
    ],
    'editing the user\u2019s role': (f) => [
      ['select id from roles where id = $1 for update', [f.r.id]],
      ['update roles set updated_at = now() where id = $1', [f.r.id]],
      ['delete from role_permissions where role_id = $1', [f.r.id]],
      ["insert into role_permissions (role_id, permission) values ($1, 'users.read')", [f.r.id]],
    ],
    'deleting the user\u2019s role': (f) => [
      ['select id from roles where id = $1 for update', [f.r.id]],
      ['delete from roles where id = $1', [f.r.id]],
    ],
    'creating a user with both roles': (f) => [
      ['select id from roles where lower(name) in ($1, $2) for share', [f.r.name, f.r2.name]],
      ["insert into users (email, email_key, first_name, last_name) select e, e, 'M', 'U' from (select 'made-' || gen_random_uuid() || '@example.com' as e) m returning id", []],
    ],
    'the user refreshing': (f) => [
      ['select s.id from session_tokens t join sessions s on s.id = t.session_id where s.user_id = $1 and t.used_at is null for update of s, t', [f.user.id]],
      ['update sessions set last_used_at = now() where user_id = $1', [f.user.id]],
    ],
    'the user changing their password': (f) => [
      ['update users set updated_at = now() where id = $1', [f.user.id]],
      ["update sessions set revoked_at = now(), revoked_reason = 'x' where user_id = $1 and id <> $2 and revoked_at is null", [f.user.id, f.session]],
    ],
    'demoting another administrator': (f) => [
      ['select id from users where id = $1 for update', [f.otherAdmin]],
      [rolesOfUserForShare, [f.otherAdmin]],
      ['select pg_advisory_xact_lock($1)', [0x6c617374]],
      ['update users set updated_at = now() where id = $1', [f.otherAdmin]],
      ['delete from user_roles where user_id = $1', [f.otherAdmin]],
    ],
  };

  /** The real requests, by an administrator or by the user. */
  const REQUESTS: Record<string, (f: Fixture) => request.Test> = {
    'DELETE /users/{id}/sessions': (f) => request(app).delete(`/users/${f.user.id}/sessions`).set('authorization', adminAuth),
    'DELETE /users/{id}/sessions/{session_id}': (f) => request(app).delete(`/users/${f.user.id}/sessions/${f.session}`).set('authorization', adminAuth),
    'PATCH /users/{id} roles added': (f) => request(app).patch(`/users/${f.user.id}`).set('authorization', adminAuth).send({ roles: [f.r.name, f.r2.name] }),
    'PATCH /users/{id} roles removed': (f) => request(app).patch(`/users/${f.user.id}`).set('authorization', adminAuth).send({ roles: [] }),
    'PATCH /users/{id} status': (f) => request(app).patch(`/users/${f.user.id}`).set('authorization', adminAuth).send({ status: 'disabled' }),
    'DELETE /users/{id}': (f) => request(app).delete(`/users/${f.user.id}`).set('authorization', adminAuth),
    'PATCH /roles/{id}': (f) => request(app).patch(`/roles/${f.r.id}`).set('authorization', adminAuth).send({ permissions: ['users.list'] }),
    'DELETE /roles/{id}': (f) => request(app).delete(`/roles/${f.r.id}`).set('authorization', adminAuth),
    'POST /users with the roles': (f) => request(app).post('/users').set('authorization', adminAuth).send({ email: `new-${Math.random()}@example.com`, first_name: 'N', last_name: 'U', roles: [f.r.name, f.r2.name] }),
    'POST /tokens by the user': (f) => request(app).post('/tokens').set('authorization', `Bearer ${f.set.access_token}`).send({ refresh_token: f.set.refresh_token }),
    'DELETE /sessions/current by the user': (f) => request(app).delete('/sessions/current').set('authorization', `Bearer ${f.set.access_token}`),
    'DELETE /users/{id}/sessions by the user': (f) => request(app).delete(`/users/${f.user.id}/sessions`).set('authorization', `Bearer ${f.set.access_token}`),
    'PUT /me/password by the user': (f) =>
      request(app).put('/me/password').set('authorization', `Bearer ${f.set.access_token}`).send({ current_password: f.user.password, new_password: `another long sentence ${Math.random()}` }),
  };

  const lockWaiters = async () =>
    (await database.pool.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount!;

  /** `send` while another transaction has taken `steps[0..k)`; then it takes the rest and rolls back. */
  async function interleaved(steps: Step[], k: number, send: () => request.Test): Promise<{ status: number; text: string; sideError?: string }> {
    const other = await database.pool.connect();
    let sideError: string | undefined;
    try {
      await other.query('begin');
      for (const [text, values] of steps.slice(0, k)) await other.query(text, values);
      let settled = false;
      const pending = send().then((res) => ((settled = true), res));
      while (!settled && (await lockWaiters()) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      try {
        for (const [text, values] of steps.slice(k)) await other.query(text, values);
      } catch (error) {
        // A deadlock, or a lock wait the service's request turned into one. (Other errors are the
        // mirror's own: it writes what it meant to even when the request changed the rows first.)
        if (['40P01', '40001', '55P03'].includes((error as { code?: string }).code ?? '')) sideError = (error as Error).message;
      }
      await other.query('rollback');
      const res = await pending;
      return { status: res.status, text: res.text, ...(sideError ? { sideError } : {}) };
    } finally {
      other.release();
    }
  }

  async function matrix(targetIsAdmin: boolean, sides: string[], requests: string[]) {
    const failures: string[] = [];
    for (const side of sides) {
      for (const name of requests) {
        const steps = SIDE[side]!;
        const dummy = { user: { id: '' }, r: {}, r2: {} } as unknown as Fixture;
        for (let k = 1; k <= steps(dummy).length; k++) {
          const f = await fixture(targetIsAdmin);
          const res = await interleaved(steps(f), k, () => REQUESTS[name]!(f));
          if (res.status >= 500 || res.sideError) failures.push(`${name} while ${side} holds ${k} lock(s): ${res.status} ${res.sideError ?? res.text}`);
        }
      }
    }
    expect(failures).toEqual([]);
  }

  it('all of them at once, for real, on one user and its roles: none answers 500', async () => {
    for (let round = 0; round < 5; round++) {
      const f = await fixture(round % 2 === 1);
      const answers = await Promise.all(Object.entries(REQUESTS).map(async ([name, send]) => [name, await send(f)] as const));
      const errors = answers.filter(([, res]) => res.status >= 500).map(([name, res]) => `${name}: ${res.status} ${res.text}`);
      expect(errors).toEqual([]);
    }
  });

  it('against a user holding an ordinary role: no request is aborted, whatever another operation holds', { timeout: 600_000 }, async () => {
    await matrix(false, Object.keys(SIDE).filter((s) => s !== 'demoting another administrator'), Object.keys(REQUESTS));
  });

  it('against an administrator (the last-admin lock in play): no request is aborted, whatever another operation holds', { timeout: 300_000 }, async () => {
    const byAdmin = ['DELETE /users/{id}/sessions', 'PATCH /users/{id} roles removed', 'PATCH /users/{id} status', 'DELETE /users/{id}', 'POST /tokens by the user'];
    await matrix(true, ['disabling the user', 'revoking the user\u2019s sessions', 'granting the user a role', 'demoting another administrator', 'the user refreshing'], byAdmin);
  });
});
