// Managing sessions: GET /sessions, DELETE /sessions/{id}, DELETE /sessions/current, GET /me,
// PUT /me/password, and an administrator's GET/DELETE /users/{id}/sessions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, refresh, signIn, type TokenSetBody } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { secondInstance } from './support/second-instance.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const bearer = (set: TokenSetBody) => `Bearer ${set.access_token}`;

describe('my sessions', () => {
  it('GET /sessions lists my live sessions with the current one marked, and nobody else’s', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db);
    const stranger = await createUser(database.db);
    const laptop = await signIn(app, me.email, me.password, 'Laptop/1.0');
    await signIn(app, me.email, me.password, 'Phone/2.0');
    await signIn(app, stranger.email, stranger.password);
    const res = await request(app).get('/sessions').set('authorization', bearer(laptop));
    expect(res.status).toBe(200);
    expectContractResponse(res, 'GET', '/sessions');
    expect(res.body.data).toHaveLength(2);
    expect(res.body.data.map((s: { user_agent: string }) => s.user_agent).sort()).toEqual(['Laptop/1.0', 'Phone/2.0']);
    const current = res.body.data.filter((s: { current: boolean }) => s.current);
    expect(current).toHaveLength(1);
    expect(current[0].user_agent).toBe('Laptop/1.0');
  });

  it('DELETE /sessions/{id} revokes my other session at once; another user’s id answers 404 and changes nothing', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db);
    const stranger = await createUser(database.db);
    const laptop = await signIn(app, me.email, me.password, 'Laptop/1.0');
    const phone = await signIn(app, me.email, me.password, 'Phone/2.0');
    const theirs = await signIn(app, stranger.email, stranger.password);
    const list = await request(app).get('/sessions').set('authorization', bearer(laptop));
    const phoneId = list.body.data.find((s: { user_agent: string }) => s.user_agent === 'Phone/2.0').id;
    const theirId = (await request(app).get('/sessions').set('authorization', bearer(theirs))).body.data[0].id;

    const foreign = await request(app).delete(`/sessions/${theirId}`).set('authorization', bearer(laptop));
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('session_not_found');
    expectContractResponse(foreign, 'DELETE', `/sessions/${theirId}`);
    expect((await request(app).get('/me').set('authorization', bearer(theirs))).status).toBe(200);

    const res = await request(app).delete(`/sessions/${phoneId}`).set('authorization', bearer(laptop));
    expect(res.status).toBe(204);
    expect((await request(app).get('/me').set('authorization', bearer(phone))).status).toBe(401);
    expect((await refresh(app, phone)).status).toBe(401);
    expect((await request(app).get('/me').set('authorization', bearer(laptop))).status).toBe(200);
    expect((await request(app).delete(`/sessions/${phoneId}`).set('authorization', bearer(laptop))).status).toBe(404);
  });

  it('DELETE /sessions/current signs out: the access and refresh tokens stop working', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db);
    const set = await signIn(app, me.email, me.password);
    const res = await request(app).delete('/sessions/current').set('authorization', bearer(set));
    expect(res.status).toBe(204);
    expect((await request(app).get('/me').set('authorization', bearer(set))).status).toBe(401);
    const again = await refresh(app, set);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('session_ended');
  });

  it('revocation is seen at once by a second server instance with its own pool', async () => {
    const { app } = createTestApp(database.db);
    const second = await secondInstance(database.url);
    try {
      const me = await createUser(database.db);
      const set = await signIn(app, me.email, me.password);
      expect((await request(second.app).get('/me').set('authorization', bearer(set))).status).toBe(200);
      await request(app).delete('/sessions/current').set('authorization', bearer(set)).expect(204);
      expect((await request(second.app).get('/me').set('authorization', bearer(set))).status).toBe(401);
    } finally {
      await second.close();
    }
  });
});

describe('GET /me', () => {
  it('returns the user, its permissions and its current session', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db, { permissions: ['users.read', 'users.list'] });
    const set = await signIn(app, me.email, me.password, 'Agent/1');
    const res = await request(app).get('/me').set('authorization', bearer(set)).set('x-api-inflection', 'camel');
    expect(res.status).toBe(200);
    expect(res.body.user.email).toBe(me.email);
    expect(res.body.user.firstName).toBe('Test');
    expect(res.body.permissions).toEqual(['users.list', 'users.read']);
    expect(res.body.session).toMatchObject({ current: true, userAgent: 'Agent/1' });
    const snake = await request(app).get('/me').set('authorization', bearer(set));
    expectContractResponse(snake, 'GET', '/me');
  });

  it('answers 401 without a token', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/me');
    expect(res.status).toBe(401);
    expectContractResponse(res, 'GET', '/me');
  });
});

describe('PUT /me/password', () => {
  it('changes the password and revokes the other sessions, keeping this one', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db);
    const here = await signIn(app, me.email, me.password);
    const elsewhere = await signIn(app, me.email, me.password);
    const res = await request(app)
      .put('/me/password')
      .set('authorization', bearer(here))
      .send({ current_password: me.password, new_password: 'a brand new sentence of mine' });
    expect(res.status).toBe(204);
    expect((await request(app).get('/me').set('authorization', bearer(here))).status).toBe(200);
    expect((await request(app).get('/me').set('authorization', bearer(elsewhere))).status).toBe(401);
    expect((await request(app).post('/sessions').send({ session: { email: me.email, password: me.password } })).status).toBe(401);
    await signIn(app, me.email, 'a brand new sentence of mine');
    const events = await database.db.selectFrom('security_events').select('type').where('user_id', '=', me.id).execute();
    expect(events.map((e) => e.type)).toContain('password_changed');
  });

  it('refuses a wrong current password, short, long and common passwords with 400, changing nothing', async () => {
    const { app } = createTestApp(database.db);
    const me = await createUser(database.db);
    const set = await signIn(app, me.email, me.password);
    const other = await signIn(app, me.email, me.password);
    const cases: [Record<string, string>, string][] = [
      [{ current_password: 'not my password', new_password: 'a brand new sentence of mine' }, 'invalid_current_password'],
      [{ current_password: me.password, new_password: 'short pass' }, 'password_rejected'],
      [{ current_password: me.password, new_password: '🔑'.repeat(11) }, 'password_rejected'], // 11 code points, 22 UTF-16 units
      [{ current_password: me.password, new_password: 'x'.repeat(129) }, 'password_rejected'],
      [{ current_password: me.password, new_password: 'QWERTY123456' }, 'password_rejected'],
      [{ current_password: me.password, new_password: '1q2w3e4r5t6y' }, 'password_rejected'],
    ];
    for (const [body, code] of cases) {
      const res = await request(app).put('/me/password').set('authorization', bearer(set)).send(body);
      expect(res.status, body.new_password).toBe(400);
      expect(res.body.code).toBe(code);
      expectContractResponse(res, 'PUT', '/me/password');
    }
    expect((await request(app).get('/me').set('authorization', bearer(other))).status).toBe(200);
    await signIn(app, me.email, me.password);
    // 12 code points made of astral characters is long enough (counted in code points).
    const ok = await request(app).put('/me/password').set('authorization', bearer(set)).send({ current_password: me.password, new_password: '🔑'.repeat(12) });
    expect(ok.status).toBe(204);
  });
});

describe('sessions of a given user (sessions.manage)', () => {
  it('lists and revokes a user’s sessions with the permission; 403 without it', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { permissions: ['sessions.manage'] });
    const plain = await createUser(database.db);
    const target = await createUser(database.db);
    const adminSet = await signIn(app, admin.email, admin.password);
    const plainSet = await signIn(app, plain.email, plain.password);
    const t1 = await signIn(app, target.email, target.password);
    const t2 = await signIn(app, target.email, target.password);

    const denied = await request(app).get(`/users/${target.id}/sessions`).set('authorization', bearer(plainSet));
    expect(denied.status).toBe(403);
    expectContractResponse(denied, 'GET', `/users/${target.id}/sessions`);
    expect((await request(app).delete(`/users/${target.id}/sessions`).set('authorization', bearer(plainSet))).status).toBe(403);

    const list = await request(app).get(`/users/${target.id}/sessions`).set('authorization', bearer(adminSet));
    expect(list.status).toBe(200);
    expectContractResponse(list, 'GET', `/users/${target.id}/sessions`);
    expect(list.body.data).toHaveLength(2);
    expect(list.body.data.every((s: { current: boolean }) => !s.current)).toBe(true);

    const [first] = list.body.data;
    const wrongOwner = await request(app).delete(`/users/${admin.id}/sessions/${first.id}`).set('authorization', bearer(adminSet));
    expect(wrongOwner.status).toBe(404);
    expect((await request(app).delete(`/users/${target.id}/sessions/${first.id}`).set('authorization', bearer(adminSet))).status).toBe(204);
    const remaining = await request(app).get(`/users/${target.id}/sessions`).set('authorization', bearer(adminSet));
    expect(remaining.body.data).toHaveLength(1);

    expect((await request(app).delete(`/users/${target.id}/sessions`).set('authorization', bearer(adminSet))).status).toBe(204);
    expect((await request(app).get('/me').set('authorization', bearer(t1))).status).toBe(401);
    expect((await request(app).get('/me').set('authorization', bearer(t2))).status).toBe(401);
    expect((await request(app).get('/me').set('authorization', bearer(adminSet))).status).toBe(200);
  });

  it('says 404 for the sessions of a user who does not exist, rather than an empty list', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { permissions: ['sessions.manage'] });
    const set = await signIn(app, admin.email, admin.password);
    const nobody = '00000000-0000-4000-8000-00000000dead';
    for (const method of ['get', 'delete'] as const) {
      const res = await request(app)[method](`/users/${nobody}/sessions`).set('authorization', bearer(set));
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
      expectContractResponse(res, method.toUpperCase(), `/users/${nobody}/sessions`);
    }
    // A user who exists but has no live session: an empty list, and revoking them all is fine.
    const idle = await createUser(database.db);
    expect((await request(app).get(`/users/${idle.id}/sessions`).set('authorization', bearer(set))).body).toEqual({ data: [] });
    expect((await request(app).delete(`/users/${idle.id}/sessions`).set('authorization', bearer(set))).status).toBe(204);
  });

  it('answers 400 for an id that is not a uuid', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { permissions: ['sessions.manage'] });
    const set = await signIn(app, admin.email, admin.password);
    const res = await request(app).get('/users/not-a-uuid/sessions').set('authorization', bearer(set));
    expect(res.status).toBe(400);
  });
});

describe('a password set by someone else', () => {
  it('an administrator who chose a new user’s password cannot leave the user on it: until the user picks their own, their tokens only change the password or sign out', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminSet = await signIn(app, admin.email, admin.password);
    await steppedUpInDatabase(database.db, admin.id); // creating a user is a sensitive change (x-step-up)
    const chosen = 'picked for you by the administrator';
    const created = await request(app)
      .post('/users')
      .set('authorization', bearer(adminSet))
      .send({ email: `newcomer-${Date.now()}@example.com`, first_name: 'New', last_name: 'Comer', roles: ['admin'], password: chosen });
    expect(created.status).toBe(201);

    const set = await signIn(app, created.body.email, chosen);
    for (const [method, path] of [['get', '/me'], ['get', '/users'], ['get', '/sessions'], ['get', '/permissions'], ['get', '/api-keys'], ['post', '/roles']] as const) {
      const res = await request(app)[method](path).set('authorization', bearer(set)).send(method === 'post' ? { name: 'sneaky', permissions: [] } : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code, `${method} ${path}`).toBe('password_change_required');
      expectContractResponse(res, method.toUpperCase(), path);
    }
    // Refreshing keeps the session going (still restricted), and another session may sign out.
    const refreshed = await refresh(app, set);
    expect(refreshed.status).toBe(201);
    const other = await signIn(app, created.body.email, chosen);
    expect((await request(app).delete('/sessions/current').set('authorization', bearer(other))).status).toBe(204);

    const changed = await request(app)
      .put('/me/password')
      .set('authorization', bearer(refreshed.body))
      .send({ current_password: chosen, new_password: 'now a password of my very own' });
    expect(changed.status).toBe(204);
    expect((await request(app).get('/users').set('authorization', bearer(refreshed.body))).status).toBe(200);
    expect((await request(app).get('/me').set('authorization', bearer(refreshed.body))).status).toBe(200);
  });
});
