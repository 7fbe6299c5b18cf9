// GET /users (and /utilisateurs) for real: keyset pagination, filters, limits; and users CRUD with
// e-mail uniqueness under races and the rule that nobody grants a role above their own rights.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { rotateServiceSecret } from '../src/auth/secrets/service-secrets.js';
import { encodeCursor } from '../src/users/cursor.js';
import { ManualClock } from '../src/clock.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { userRow } from './support/rows.js';

let database: TestDatabase;
let listKey: string;
let adminId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  listKey = (await makeApiKey(database.db, ['users.list', 'users.read'])).secret;
  adminId = (await makeUser(database.db, { email: 'root@example.org', roleIds: [await adminRoleId(database.db)] })).id;
});
afterAll(() => database.destroy());

describe('GET /users', () => {
  it('walks every user exactly once in a stable order, even users created in the same microsecond', async () => {
    const sameInstant = new Date('2025-01-01T00:00:00.000Z');
    const made = [];
    for (let i = 0; i < 23; i++) made.push((await makeUser(database.db, { email: `page-${i}@walk.example`, createdAt: sameInstant })).id);
    // Then users a microsecond apart, which a millisecond cursor would skip or repeat.
    const later = [];
    for (let i = 1; i <= 7; i++) {
      const at = `2025-01-01T00:00:00.00${i}00${i}Z`;
      const row = await database.db.insertInto('users').values(userRow({ email: `micro-${i}@walk.example`, first_name: 'Micro', last_name: 'Second', created_at: at, updated_at: at })).returning('id').executeTakeFirstOrThrow();
      later.push(row.id);
    }
    const { app } = createTestApp(database.db);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/users?limit=5&search=walk.example${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await request(app).get(url).set('x-api-key', listKey);
      expect(res.status).toBe(200);
      expectContractResponse(res, 'GET', '/users');
      expect(res.body.data.length).toBeLessThanOrEqual(5);
      seen.push(...res.body.data.map((u: { id: string }) => u.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(6);
    expect(seen).toHaveLength(30);
    expect(seen).toEqual([...[...made].sort(), ...later]); // same instant: ordered by id; then by time
  });

  it('defaults to 50 per page, accepts 200, and refuses 201 with 400', async () => {
    for (let i = 0; i < 60; i++) await makeUser(database.db, { email: `bulk-${i}@bulk.example` });
    const { app } = createTestApp(database.db);
    const first = await request(app).get('/users').set('x-api-key', listKey);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect((await request(app).get('/users?limit=200').set('x-api-key', listKey)).status).toBe(200);
    for (const bad of ['201', '0', 'ten']) {
      const res = await request(app).get(`/users?limit=${bad}`).set('x-api-key', listKey);
      expect(res.status, bad).toBe(400);
      expect(res.body.errors[0].location).toBe('request/query/limit');
      expectContractResponse(res, 'GET', '/users');
    }
  });

  it('refuses an altered cursor with 400 invalid_cursor', async () => {
    const { app } = createTestApp(database.db);
    for (const cursor of ['garbage', Buffer.from('{"t":"x","i":"y"}').toString('base64url')]) {
      const res = await request(app).get(`/users?cursor=${cursor}`).set('x-api-key', listKey);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
      expectContractResponse(res, 'GET', '/users');
    }
  });

  describe('cursor tampering', () => {
    const page = (app: Parameters<typeof request>[0], query: string) => request(app).get(`/users?limit=2&${query}`).set('x-api-key', listKey);
    const expectInvalidCursor = (res: request.Response) => {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
      expectContractResponse(res, 'GET', '/users');
    };
    beforeAll(async () => {
      for (let i = 0; i < 5; i++) await makeUser(database.db, { email: `tamper-${i}@cursor.example` });
    });

    it('an edited cursor is refused: its position cannot be moved', async () => {
      const { app } = createTestApp(database.db);
      const cursor: string = (await page(app, 'search=cursor.example')).body.next_cursor;
      const [payload, signature] = cursor.split('.');
      const position = JSON.parse(Buffer.from(payload!, 'base64url').toString()) as { t: string; i: string };
      const moved = Buffer.from(JSON.stringify({ ...position, t: '2000-01-01T00:00:00.000000Z' })).toString('base64url');
      expectInvalidCursor(await page(app, `search=cursor.example&cursor=${moved}.${signature}`));
      // The unsigned form of the same position, as cursors used to be.
      expectInvalidCursor(await page(app, `search=cursor.example&cursor=${payload}`));
    });

    it('a cursor made under one filter is refused under another', async () => {
      const { app } = createTestApp(database.db);
      const cursor: string = (await page(app, 'search=cursor.example&status=active')).body.next_cursor;
      expect((await page(app, `search=cursor.example&status=active&cursor=${cursor}`)).status).toBe(200);
      for (const other of ['search=cursor.example&status=disabled', 'search=cursor.example', 'search=cursor.exampl&status=active', 'search=cursor.example&status=active&role=admin']) {
        expectInvalidCursor(await page(app, `${other}&cursor=${cursor}`));
      }
    });

    it('a cursor signed with any other key is refused, and rotating the key refuses outstanding cursors, within a minute on a running server', async () => {
      const clock = new ManualClock(new Date('2026-05-01T00:00:00.000Z'));
      const { app } = createTestApp(database.db, { clock });
      const first = await page(app, 'search=cursor.example');
      const cursor: string = first.body.next_cursor;
      const forged = encodeCursor(randomBytes(32), { createdAt: '2000-01-01T00:00:00.000000Z', id: first.body.data[0].id }, { search: 'cursor.example' });
      expectInvalidCursor(await page(app, `search=cursor.example&cursor=${forged}`));

      await rotateServiceSecret(database.db, 'cursor_signing', clock.now());
      expectInvalidCursor(await page(createTestApp(database.db).app, `search=cursor.example&cursor=${cursor}`));
      clock.advance(61_000);
      expectInvalidCursor(await page(app, `search=cursor.example&cursor=${cursor}`));
      // Only cursors: the same key still lists, and new cursors work.
      const again = await page(app, 'search=cursor.example');
      expect(again.status).toBe(200);
      expect((await page(app, `search=cursor.example&cursor=${again.body.next_cursor}`)).status).toBe(200);
    });
  });

  it('filters by status, role and a search on e-mail and names, never showing a hash', async () => {
    const role = await makeRole(database.db, ['tasks.list'], 'Auditors');
    const ada = await makeUser(database.db, { email: 'ada@filters.example', roleIds: [role.id], passwordHash: '$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA' });
    await database.db.updateTable('users').set({ first_name: 'Ada', last_name: 'Lovelace' }).where('id', '=', ada.id).execute();
    const off = await makeUser(database.db, { email: 'off@filters.example' });
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', off.id).execute();
    const { app } = createTestApp(database.db);
    const get = (q: string) => request(app).get(`/users?${q}`).set('x-api-key', listKey);
    const ids = (res: request.Response) => res.body.data.map((u: { id: string }) => u.id);

    expect(ids(await get('role=auditors'))).toEqual([ada.id]);
    expect(ids(await get('search=LOVELACE'))).toEqual([ada.id]);
    expect(ids(await get('search=ada%20love'))).toEqual([ada.id]);
    expect(ids(await get('search=filters.example&status=disabled'))).toEqual([off.id]);
    expect(ids(await get('search=%25'))).toEqual([]); // a literal %, not a wildcard
    const one = await get('role=Auditors');
    expect(one.body.data[0]).toMatchObject({ email: 'ada@filters.example', roles: ['Auditors'], status: 'active' });
    expect(one.text).not.toContain('argon2');
    expect((await get('status=gone')).status).toBe(400);
  });

  it('serves /utilisateurs with the same rules', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/utilisateurs?limit=2').set('x-api-key', listKey).set('x-api-inflection', 'camel');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(2);
    expect(res.body).toHaveProperty('nextCursor');
    expect((await request(app).get('/utilisateurs?limit=500').set('x-api-key', listKey)).status).toBe(400);
  });
});

describe('users CRUD', () => {
  it('an address POST /users takes (x@intranet, no dot in its domain) is answered on contract by every read of it, not 500', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const created = await request(app).post('/users').set('authorization', auth).send({ email: `dotless-${randomBytes(4).toString('hex')}@intranet`, first_name: 'D', last_name: 'L' });
    expect(created.status, created.text).toBe(201);
    const read = await request(app).get(`/users/${created.body.id}`).set('authorization', auth);
    expect(read.status, read.text).toBe(200);
    expectContractResponse(read, 'GET', '/users/{id}');
  });

  it('creates, reads, changes and disables a user; the record stays', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const role = await makeRole(database.db, ['users.list']);
    const created = await request(app).post('/users').set('authorization', auth).send({ email: 'Grace@Crud.example', first_name: 'Grace', last_name: 'Hopper', roles: [role.name] });
    expect(created.status).toBe(201);
    expectContractResponse(created, 'POST', '/users');
    expect(created.body).toMatchObject({ email: 'Grace@Crud.example', roles: [role.name], status: 'active', last_sign_in_at: null });
    const id = created.body.id as string;

    const read = await request(app).get(`/users/${id}`).set('x-api-key', listKey);
    expect(read.status).toBe(200);
    expectContractResponse(read, 'GET', `/users/${id}`);
    expect(read.body).toEqual(created.body);
    // Timestamps are printed by PostgreSQL exactly as JavaScript's toISOString() would print them.
    const stored = await database.db.selectFrom('users').select(['created_at', 'updated_at']).where('id', '=', id).executeTakeFirstOrThrow();
    stored.created_at.setUTCMilliseconds(123); // a fraction that shows whether milliseconds survive
    await database.db.updateTable('users').set({ created_at: stored.created_at, last_sign_in_at: stored.created_at }).where('id', '=', id).execute();
    const reread = await request(app).get(`/users/${id}`).set('x-api-key', listKey);
    expect(reread.body).toMatchObject({ created_at: stored.created_at.toISOString(), updated_at: stored.updated_at.toISOString(), last_sign_in_at: stored.created_at.toISOString() });
    expect(reread.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.123Z$/);

    const patched = await request(app).patch(`/users/${id}`).set('authorization', auth).send({ last_name: 'Murray Hopper', roles: [] });
    expect(patched.status).toBe(200);
    expectContractResponse(patched, 'PATCH', `/users/${id}`);
    expect(patched.body).toMatchObject({ last_name: 'Murray Hopper', roles: [] });

    const disabled = await request(app).delete(`/users/${id}`).set('authorization', auth);
    expect(disabled.status).toBe(200);
    expectContractResponse(disabled, 'DELETE', `/users/${id}`);
    expect(disabled.body.status).toBe('disabled');
    expect((await request(app).get(`/users/${id}`).set('x-api-key', listKey)).body.status).toBe('disabled');
  });

  it('DELETE ends every session of the user: their access token stops working at once', async () => {
    const password = 'a long enough passphrase';
    const person = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)], passwordHash: await hashPassword(password) });
    const { app } = createAppWithTestBearer(database.db);
    const signIn = await request(app).post('/sessions').send({ session: { email: person.email, password } });
    expect(signIn.status).toBe(201);
    const theirs = `Bearer ${signIn.body.access_token as string}`;
    // The stand-in bearer would not notice; the real one is used through a plain app.
    const { app: real } = createTestApp(database.db);
    expect((await request(real).get('/users').set('authorization', theirs)).status).toBe(200);
    expect((await request(app).delete(`/users/${person.id}`).set('authorization', testBearer(adminId))).status).toBe(200);
    const after = await request(real).get('/users').set('authorization', theirs);
    expect(after.status).toBe(401);
    const sessions = await database.db.selectFrom('sessions').select(['revoked_at', 'revoked_reason']).where('user_id', '=', person.id).execute();
    expect(sessions).toEqual([{ revoked_at: expect.any(Date), revoked_reason: 'user_disabled' }]);
  });

  it('disabling a user (DELETE, or PATCH status) writes session_revoked for each of their sessions', async () => {
    const password = 'a long enough passphrase';
    const { app } = createAppWithTestBearer(database.db);
    for (const disable of [
      (id: string) => request(app).delete(`/users/${id}`).set('authorization', testBearer(adminId)),
      (id: string) => request(app).patch(`/users/${id}`).set('authorization', testBearer(adminId)).send({ status: 'disabled' }),
    ]) {
      const person = await makeUser(database.db, { passwordHash: await hashPassword(password) });
      for (const agent of ['Laptop/1.0', 'Phone/2.0']) {
        const res = await request(app).post('/sessions').set('user-agent', agent).send({ session: { email: person.email, password } });
        expect(res.status).toBe(201);
      }
      expect((await disable(person.id)).status).toBe(200);
      const sessions = await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).execute();
      const events = await database.db
        .selectFrom('security_events')
        .select(['session_id', 'details'])
        .where('user_id', '=', person.id)
        .where('type', '=', 'session_revoked')
        .execute();
      expect(events.map((e) => e.session_id).sort()).toEqual(sessions.map((s) => s.id).sort());
      for (const event of events) expect(event.details).toEqual({ reason: 'user_disabled' });
    }
  });

  it('answers 404 for an unknown id and 400 for a malformed one', async () => {
    const { app } = createTestApp(database.db);
    const missing = await request(app).get('/users/00000000-0000-4000-8000-000000000000').set('x-api-key', listKey);
    expect(missing.status).toBe(404);
    expectContractResponse(missing, 'GET', '/users/00000000-0000-4000-8000-000000000000');
    expect((await request(app).get('/users/not-a-uuid').set('x-api-key', listKey)).status).toBe(400);
  });

  it('answers 409 email_taken to a duplicate e-mail, case aside, even when creations race', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const results = await Promise.all(
      ['race@dup.example', 'RACE@dup.example', 'Race@Dup.Example', 'race@DUP.example'].map((email) =>
        request(app).post('/users').set('authorization', auth).send({ email, first_name: 'R', last_name: 'C', roles: ['admin'] }),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const r of results.filter((x) => x.status === 409)) {
      expect(r.body.code).toBe('email_taken');
      expectContractResponse(r, 'POST', '/users');
    }
    const rows = await database.db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['email']), '=', 'race@dup.example')).execute();
    expect(rows).toHaveLength(1);
    const grants = await database.db.selectFrom('user_roles').select('user_id').where('user_id', '=', rows[0]!.id).execute();
    expect(grants).toHaveLength(1); // the losers left no role grant behind
  });

  it('refuses to grant a role holding a permission the caller lacks, and changes nothing', async () => {
    const managerRole = await makeRole(database.db, ['users.create', 'users.update', 'users.list']);
    const manager = await makeUser(database.db, { roleIds: [managerRole.id] });
    const target = await makeUser(database.db);
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(manager.id);
    const viaCreate = await request(app).post('/users').set('authorization', auth).send({ email: 'esc@grant.example', first_name: 'E', last_name: 'S', roles: ['admin'] });
    expect(viaCreate.status).toBe(403);
    expect(viaCreate.body.code).toBe('permission_denied');
    expectContractResponse(viaCreate, 'POST', '/users');
    expect(await database.db.selectFrom('users').select('id').where('email', '=', 'esc@grant.example').executeTakeFirst()).toBeUndefined();

    const viaPatch = await request(app).patch(`/users/${target.id}`).set('authorization', auth).send({ roles: ['admin'], first_name: 'Changed' });
    expect(viaPatch.status).toBe(403);
    const after = await database.db.selectFrom('users').select('first_name').where('id', '=', target.id).executeTakeFirstOrThrow();
    expect(after.first_name).toBe('Test');

    const allowed = await request(app).patch(`/users/${target.id}`).set('authorization', auth).send({ roles: [managerRole.name] });
    expect(allowed.status).toBe(200);
    const unknown = await request(app).patch(`/users/${target.id}`).set('authorization', auth).send({ roles: ['no-such-role'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.code).toBe('unknown_role');
  });

  it('needs users.disable, not only users.update, to change a status through PATCH', async () => {
    const editorRole = await makeRole(database.db, ['users.update', 'users.read']);
    const editor = await makeUser(database.db, { roleIds: [editorRole.id] });
    const target = await makeUser(database.db);
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(editor.id);
    const refused = await request(app).patch(`/users/${target.id}`).set('authorization', auth).send({ status: 'disabled', first_name: 'Changed' });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'permission_denied', required_permission: 'users.disable' });
    expectContractResponse(refused, 'PATCH', `/users/${target.id}`);
    const unchanged = await database.db.selectFrom('users').select(['status', 'first_name']).where('id', '=', target.id).executeTakeFirstOrThrow();
    expect(unchanged).toEqual({ status: 'active', first_name: 'Test' });

    expect((await request(app).patch(`/users/${target.id}`).set('authorization', auth).send({ first_name: 'Renamed' })).status).toBe(200);
    const disablerRole = await makeRole(database.db, ['users.update', 'users.disable']);
    const disabler = await makeUser(database.db, { roleIds: [disablerRole.id] });
    const allowed = await request(app).patch(`/users/${target.id}`).set('authorization', testBearer(disabler.id)).send({ status: 'disabled' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.status).toBe('disabled');
  });

  it('refuses a weak initial password, and stores a strong one only as an argon2id hash', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const weak = await request(app).post('/users').set('authorization', auth).send({ email: 'pw@weak.example', first_name: 'P', last_name: 'W', password: 'short' });
    expect(weak.status).toBe(400);
    expect(weak.body.code).toBe('password_policy');
    const ok = await request(app).post('/users').set('authorization', auth).send({ email: 'pw@ok.example', first_name: 'P', last_name: 'W', password: 'a long enough passphrase' });
    expect(ok.status).toBe(201);
    expect(ok.text).not.toContain('argon2');
    const row = await database.db.selectFrom('users').select('password_hash').where('id', '=', ok.body.id).executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^\$argon2id\$/);
  });
});
