// The contract validator handed the service's own route match (src/contract/validator.ts): no
// request reaches a handler unvalidated or unauthorised, whatever it sends. On the real service and
// PostgreSQL, each test named as the attacker tries it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';

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

describe('security: the validator on the service’s own match: no request reaches a handler unvalidated or unauthorised', () => {
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
