// Attacks on the hot path's shortcuts: the contract validator handed the service's own route match
// (src/contract/validator.ts), the API's steps as one router step (src/http/series.ts), security
// headers computed once, the bearer lookup's admin mark, binary timestamps in fixed statements, and
// the pooled random bytes of secrets. Each test is an attack, on the real service and a real
// PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';
import { generateSecret } from '../src/auth/secrets/secrets.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../src/auth/permissions.js';
import { roleRow } from './support/rows.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

// The API's security headers (src/http/security-headers.ts).
const SECURITY_HEADERS = ['content-security-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options'];
function expectSecurityHeaders(res: request.Response, what: string) {
  for (const name of SECURITY_HEADERS) expect(res.headers[name], `${what}: ${name}`).toBeDefined();
}

describe('the validator on the service’s own match: no request reaches a handler unvalidated or unauthorised', () => {
  it('other methods on a secured path (OPTIONS, TRACE, PROPFIND) are refused 405, never dispatched', async () => {
    const { app } = createTestApp(database.db);
    const options = await request(app).options('/users').set('x-api-key', 'nope');
    expect(options.status).toBe(405);
    expectSecurityHeaders(options, 'OPTIONS');
    for (const method of ['TRACE', 'PROPFIND', 'PURGE', 'LINK']) {
      const status = await new Promise<number>((resolve, reject) => {
        const server = app.listen(0, () => {
          const { port } = server.address() as { port: number };
          const req = http.request({ port, host: '127.0.0.1', path: '/users', method, headers: { 'x-api-key': 'nope' } }, (res) => {
            res.resume();
            server.close();
            resolve(res.statusCode!);
          });
          req.on('error', reject);
          req.end();
        });
      });
      expect(status, method).toBe(405);
    }
  });

  it('HEAD of a secured GET without credentials or without the permission is refused like the GET', async () => {
    const { app } = createTestApp(database.db);
    await request(app).head('/users').expect(401);
    await request(app).head('/utilisateurs').expect(401);
    const user = await createUser(database.db);
    const { access_token } = await signIn(app, user.email, user.password);
    await request(app).head('/users').set('authorization', `Bearer ${access_token}`).expect(403);
    await request(app).head('/utilisateurs/').set('authorization', `Bearer ${access_token}`).expect(403);
    await request(app).head('/audit-events/sign-ins-per-hour').set('authorization', `Bearer ${access_token}`).expect(403);
  });

  it('the French alias path and trailing slashes need the same permission as the English path', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db, { permissions: ['audit.read'] });
    const { access_token } = await signIn(app, user.email, user.password);
    for (const path of ['/utilisateurs', '/utilisateurs/', '/users/', '/roles/']) {
      const res = await request(app).get(path).set('authorization', `Bearer ${access_token}`).set('accept', 'application/json');
      expect(res.status, path).toBe(403);
    }
  });

  it('a percent-encoded "current" does not sign the caller out: DELETE /sessions/%63urrent is /sessions/{id}, validated', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db);
    const { access_token } = await signIn(app, user.email, user.password);
    const res = await request(app).delete('/sessions/%63urrent').set('authorization', `Bearer ${access_token}`);
    expect(res.status).toBe(400);
    await request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
  });

  it('path traversal and encoded slashes in a path parameter are refused 400 before any handler', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    for (const path of ['/users/..%2F..%2Froles', '/users/%2e%2e', '/users/%00', '/users/1%20or%201=1', `/users/${'%41'.repeat(36)}`]) {
      const res = await request(app).get(path).set('authorization', `Bearer ${access_token}`).set('accept', 'application/json');
      expect(res.status, path).toBe(400);
    }
  });

  it('a body of another content type (text, form, +json, latin1) on a POST is refused 415 and creates nothing', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/merge-patch+json', 'application/json; charset=latin1']) {
      const res = await request(app)
        .post('/roles')
        .set('authorization', `Bearer ${access_token}`)
        .set('content-type', type)
        .send(JSON.stringify({ role: { name: `smuggled-${type.length}`, permissions: ['users.list'] } }));
      expect(res.status, type).toBe(415);
    }
    const none = await sql<{ n: number }>`select count(*)::int as n from roles where name like 'smuggled-%'`.execute(database.db);
    expect(none.rows[0]!.n).toBe(0);
  });

  it('a request sending both an API key and a bearer token is refused 400, not authenticated by either', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/users').set('x-api-key', 'x').set('authorization', 'Bearer y');
    expect(res.status).toBe(400);
  });
});

describe('security headers on every answer path', () => {
  it('404, 405, 401, 400, 415, HEAD, /openapi.json, /docs, /livez and the web app all carry the security headers', async () => {
    const { app } = createTestApp(database.db);
    const answers: [string, request.Test][] = [
      ['404', request(app).get('/nowhere').set('accept', 'application/json')],
      ['405', request(app).delete('/users')],
      ['401', request(app).get('/users')],
      ['400 malformed uri', request(app).get('/users/%E0%A4%A').set('authorization', 'Bearer nope')],
      ['415', request(app).post('/sessions').set('content-type', 'text/plain').send('x')],
      ['400 json', request(app).post('/sessions').set('content-type', 'application/json').send('{')],
      ['HEAD', request(app).head('/users')],
      ['openapi', request(app).get('/openapi.json')],
      ['docs', request(app).get('/docs')],
      ['livez', request(app).get('/livez')],
      ['OPTIONS livez', request(app).options('/livez')],
      ['page', request(app).get('/some/page').set('accept', 'text/html')],
    ];
    for (const [what, answer] of answers) expectSecurityHeaders(await answer, what);
  });
});

describe('the bearer lookup’s admin mark', () => {
  it('a role named "admin" that is not the built-in one grants only its own permissions; renaming the built-in role changes nothing', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminToken = (await signIn(app, admin.email, admin.password)).access_token;
    // Through the API: making or renaming a role "admin" or "Admin", or giving it the mark.
    for (const name of ['admin', 'Admin', 'admin ']) {
      const res = await request(app).post('/roles').set('authorization', `Bearer ${adminToken}`).send({ role: { name, permissions: ['users.list'] } });
      expect([400, 409], name).toContain(res.status);
    }
    const star = await request(app).post('/roles').set('authorization', `Bearer ${adminToken}`).send({ role: { name: 'star', permissions: ['*'] } });
    expect(star.status).toBe(400);
    // Straight in the database: the built-in role renamed, and a role named "admin" that is not built in.
    const user = await createUser(database.db);
    await sql`update roles set name = 'admin-was-built-in', name_key = 'admin-was-built-in' where id = ${ADMIN_ROLE_ID}`.execute(database.db);
    let access_token: string;
    try {
      const fake = await database.db.insertInto('roles').values(roleRow({ name: 'admin' })).returning('id').executeTakeFirstOrThrow();
      await database.db.insertInto('role_permissions').values({ role_id: fake.id, permission: 'users.list' }).execute();
      await database.db.insertInto('user_roles').values({ user_id: user.id, role_id: fake.id }).execute();
      access_token = (await signIn(app, user.email, user.password)).access_token;
      const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
      expect(me.body.permissions).toEqual(['users.list']);
      // What makes the admin role is its id, not its name: its holders keep every right.
      await request(app).get('/roles').set('authorization', `Bearer ${adminToken}`).expect(200);
      const adminMe = await request(app).get('/me').set('authorization', `Bearer ${adminToken}`).expect(200);
      expect([...adminMe.body.permissions].sort()).toEqual([...PERMISSIONS].sort());
    } finally {
      await sql`delete from roles where name = 'admin' and not built_in`.execute(database.db);
      await sql`update roles set name = 'admin', name_key = 'admin' where id = ${ADMIN_ROLE_ID}`.execute(database.db);
    }
    await request(app).get('/roles').set('authorization', `Bearer ${access_token}`).expect(403);
  });

  it('forging an admin role in the database is refused: a second built-in role, the flag on another role, or the admin role moved to another id', async () => {
    const other = await database.db.insertInto('roles').values(roleRow({ name: `other-${Date.now()}` })).returning('id').executeTakeFirstOrThrow();
    // Each forgery carries the second-factor flag the admin role must hold, so it meets the check it attacks.
    const forgeries = [
      sql`insert into roles (name, name_key, built_in, requires_second_factor) values ('second admin', 'second admin', true, true)`,
      sql`update roles set built_in = true, requires_second_factor = true where id = ${other.id}`,
      sql`update roles set id = gen_random_uuid() where id = ${ADMIN_ROLE_ID}`,
      sql`update roles set built_in = false where id = ${ADMIN_ROLE_ID}`,
    ];
    for (const forgery of forgeries) {
      await expect(forgery.execute(database.db)).rejects.toMatchObject({ code: '23514', constraint: 'roles_built_in_is_admin' });
    }
    // And the admin role cannot be freed of its second factor.
    await expect(sql`update roles set requires_second_factor = false where id = ${ADMIN_ROLE_ID}`.execute(database.db)).rejects.toMatchObject({ code: '23514', constraint: 'roles_admin_requires_second_factor' });
    const builtIn = await database.db.selectFrom('roles').select(['id', 'name']).where('built_in', '=', true).execute();
    expect(builtIn).toEqual([{ id: ADMIN_ROLE_ID, name: 'admin' }]);
  });

  it('an administrator who is disabled gets nothing from the mark', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    await request(app).get('/users').set('authorization', `Bearer ${access_token}`).expect(200);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', admin.id).execute();
    await request(app).get('/users').set('authorization', `Bearer ${access_token}`).expect(401);
  });
});

describe('binary timestamps of fixed statements', () => {
  it('a sign-in records the clock’s instant, to the millisecond, in the session, its token and the sign-in event', async () => {
    const instant = new Date('2031-03-30T01:30:00.123Z'); // a DST change in Europe, for a local-time mistake to show
    const clock = new ManualClock(instant);
    const { app } = createTestApp(database.db, { clock });
    const user = await createUser(database.db);
    await request(app).post('/sessions').send({ session: { email: user.email, password: 'wrong password here' } }).expect(401);
    await signIn(app, user.email, user.password);
    const row = await sql<{ created_at: Date; expires_at: Date; issued_at: Date; occurred_at: Date }>`
      select s.created_at, s.expires_at, t.issued_at, e.occurred_at from sessions s
      join session_tokens t on t.session_id = s.id
      join security_events e on e.session_id = s.id and e.type = 'sign_in_succeeded'
      where s.user_id = ${user.id}`.execute(database.db);
    const r = row.rows[0]!;
    expect(r.created_at.toISOString()).toBe(instant.toISOString());
    expect(r.issued_at.toISOString()).toBe(instant.toISOString());
    expect(r.occurred_at.toISOString()).toBe(instant.toISOString());
    expect(r.expires_at.getTime()).toBeGreaterThan(instant.getTime());
  });
});

describe('pooled random bytes of secrets', () => {
  it('secrets drawn across many pool refills never repeat nor share their random body, and every character is about equally likely', () => {
    const secrets = Array.from({ length: 5000 }, () => generateSecret('bot'));
    expect(new Set(secrets).size).toBe(secrets.length);
    const bodies = secrets.map((s) => s.slice('bot_'.length, 'bot_'.length + 20));
    expect(new Set(bodies).size).toBe(bodies.length);
    const counts = new Map<string, number>();
    for (const s of bodies) for (const c of s) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    const expected = (bodies.length * 20) / 62;
    const chi2 = [...counts.values()].reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(140); // 61 degrees of freedom: p < 1e-7 beyond this
  });
});
