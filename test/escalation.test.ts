// Escalation attacks on "nobody gives, prolongs or takes away what they do not hold"
// (docs/AUTH.md), run as an attacker would: signed in for real on the real service and PostgreSQL.
// Each refusal is checked to be the documented problem and to change nothing; each allowed
// neighbour is checked to still work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { budget } from './support/budgets.js';
import { makeApiKey, makeRole } from './support/access-fixtures.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import type { Kysely } from 'kysely';
import type { PoolClient } from 'pg';
import type { Database } from '../src/db/schema.js';
import { PERMISSIONS } from '../src/auth/permissions.js';

let database: TestDatabase;
let app: ReturnType<typeof createTestApp>['app'];
/** Administrators of the shared database (so no test here is about the last one). */
let admin: Person;
beforeAll(async () => {
  database = await createTestDatabase();
  app = createTestApp(database.db).app;
  admin = await person(database.db, { roles: ['admin'] });
  await person(database.db, { roles: ['admin'] });
}, budget({ passwordHash: 4 }));
afterAll(() => database.destroy());

interface Person {
  id: string;
  email: string;
  auth: string;
}

/**
 * A user signed in through POST /sessions, holding `permissions` (through a role of its own) or
 * `roles`, the session stepped up (creating and rotating keys need it; the test clock stands
 * still, so the proof stays fresh).
 */
async function person(db: Kysely<Database>, grant: { permissions?: string[]; roles?: string[] }, on = app): Promise<Person> {
  const user = await createUser(db, grant);
  const set = await signIn(on, user.email, user.password);
  await steppedUpInDatabase(db, user.id);
  return { id: user.id, email: user.email, auth: `Bearer ${set.access_token}` };
}

/** Runs `attempt`, which must be refused, and asserts that no table changed meanwhile. */
async function refusedWithoutChange(db: Kysely<Database>, attempt: () => Promise<request.Response>): Promise<request.Response> {
  const tables = await tableNames(db);
  const before = await digestTables(db, tables);
  const res = await attempt();
  expect(res.status, res.text).toBeGreaterThanOrEqual(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(changedTables(before, await digestTables(db, tables))).toEqual([]);
  return res;
}

function expectOutranked(res: request.Response, missing: string[]) {
  expect(res.status, res.text).toBe(403);
  expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: missing });
}

/** Every permission of the catalogue but these (what an administrator holds beyond them). */
const missingBesides = (held: string[]) => PERMISSIONS.filter((p) => !held.includes(p)).sort();

/** The session_revoked events recorded for this user. */
const revocationsOf = (userId: string) =>
  database.db.selectFrom('security_events').select('id').where('type', '=', 'session_revoked').where('user_id', '=', userId).execute();

async function adminKey(permissions: string[], body: Record<string, unknown> = {}) {
  const res = await request(app).post('/api-keys').set('authorization', admin.auth).send({ name: `wide ${Math.random()}`, permissions, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { api_key: { id: string }; secret: string };
}

describe('API keys', () => {
  it('a key manager cannot rotate a wider key to steal its secret, with or without a grace period', async () => {
    const wide = await adminKey(['users.create', 'roles.manage'], { expires_at: new Date(Date.now() + 86_400_000).toISOString() });
    const manager = await person(database.db, { permissions: ['api_keys.manage'] });
    for (const body of [{}, { grace_period_seconds: 3600 }]) {
      const path = `/api-keys/${wide.api_key.id}/rotate`;
      const res = await refusedWithoutChange(database.db, () => request(app).post(path).set('authorization', manager.auth).send(body));
      expectOutranked(res, ['roles.manage', 'users.create']);
      expect(res.text).not.toMatch(/bok_/);
      expectContractResponse(res, 'POST', path);
    }
    // The original secret still works; a manager who holds the key's permissions may rotate it.
    expect((await request(app).get('/roles').set('x-api-key', wide.secret)).status).toBe(200);
    const peer = await person(database.db, { permissions: ['api_keys.manage', 'users.create', 'roles.manage'] });
    const ok = await request(app).post(`/api-keys/${wide.api_key.id}/rotate`).set('authorization', peer.auth).send({});
    expect(ok.status, ok.text).toBe(200);
  });

  it('a key manager cannot make a wider key never expire, nor expire later', async () => {
    const at = new Date(Date.now() + 86_400_000);
    const wide = await adminKey(['users.create', 'roles.manage'], { expires_at: at.toISOString() });
    const manager = await person(database.db, { permissions: ['api_keys.manage', 'users.create'] });
    const path = `/api-keys/${wide.api_key.id}`;
    for (const expires_at of [null, new Date(at.getTime() + 86_400_000).toISOString()]) {
      const res = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', manager.auth).send({ expires_at }));
      expectOutranked(res, ['roles.manage']);
      expectContractResponse(res, 'PATCH', path);
    }
    // Taking away is allowed: an earlier date, a new name, fewer permissions (then prolonging the
    // narrowed key, which holds nothing the manager lacks).
    const sooner = await request(app).patch(path).set('authorization', manager.auth).send({ expires_at: new Date(at.getTime() - 3600_000).toISOString(), name: `renamed ${Math.random()}` });
    expect(sooner.status, sooner.text).toBe(200);
    const narrowed = await request(app).patch(path).set('authorization', manager.auth).send({ permissions: ['users.create'], expires_at: null });
    expect(narrowed.status, narrowed.text).toBe(200);
    expect(narrowed.body).toMatchObject({ permissions: ['users.create'], never_expires: true });
  });

  it('any key manager may revoke a wider key: cleaning up a leaked key never waits for an administrator', async () => {
    const wide = await adminKey(['users.create', 'roles.manage']);
    const manager = await person(database.db, { permissions: ['api_keys.manage'] });
    expect((await request(app).delete(`/api-keys/${wide.api_key.id}`).set('authorization', manager.auth)).status).toBe(204);
    expect((await request(app).get('/roles').set('x-api-key', wide.secret)).status).toBe(401);
  });

  it('every key manager sees every key\u2019s metadata and creator, never a secret', async () => {
    const wide = await adminKey(['users.create']);
    const manager = await person(database.db, { permissions: ['api_keys.manage'] });
    const list = await request(app).get('/api-keys').set('authorization', manager.auth);
    expect(list.status).toBe(200);
    expectContractResponse(list, 'GET', '/api-keys');
    const shown = list.body.data.find((k: { id: string }) => k.id === wide.api_key.id);
    expect(shown).toMatchObject({ created_by: admin.id, creator: { id: admin.id, email: admin.email, status: 'active' }, effective_permissions: ['users.create'] });
    const one = await request(app).get(`/api-keys/${wide.api_key.id}`).set('authorization', manager.auth);
    expect(one.body).toEqual(shown);
    expect(list.text + one.text).not.toContain(wide.secret.split('_')[1]);
  });
});

describe('users, roles and sessions', () => {
  it('a user manager cannot strip an administrator\u2019s roles', async () => {
    const manager = await person(database.db, { permissions: ['users.update', 'users.read'] });
    const path = `/users/${admin.id}`;
    const res = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', manager.auth).send({ roles: [] }));
    expect(res.body.code).toBe('target_outranks_caller');
    expect(res.body.missing_permissions).toContain('roles.manage');
    expectContractResponse(res, 'PATCH', path);
    // Names are not rights: renaming someone above you is allowed.
    expect((await request(app).patch(path).set('authorization', manager.auth).send({ first_name: 'Root' })).status).toBe(200);
  });

  it('a user disabler cannot disable an administrator, by DELETE or by PATCH', async () => {
    const disabler = await person(database.db, { permissions: ['users.disable', 'users.update'] });
    const path = `/users/${admin.id}`;
    const byDelete = await refusedWithoutChange(database.db, () => request(app).delete(path).set('authorization', disabler.auth));
    expect(byDelete.body.code).toBe('target_outranks_caller');
    expectContractResponse(byDelete, 'DELETE', path);
    const byPatch = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', disabler.auth).send({ status: 'disabled' }));
    expect(byPatch.body.code).toBe('target_outranks_caller');
    // A peer holding no more than the disabler can be disabled.
    const peer = await createUser(database.db, { permissions: ['users.disable'] });
    expect((await request(app).delete(`/users/${peer.id}`).set('authorization', disabler.auth)).status).toBe(200);
  });

  it('a role manager cannot remove from a role permissions it does not hold, nor delete the role', async () => {
    const manager = await person(database.db, { permissions: ['roles.manage', 'tasks.list'] });
    const made = await request(app).post('/roles').set('authorization', admin.auth).send({ name: `ops ${Math.random()}`, permissions: ['users.create', 'tasks.list'] });
    const path = `/roles/${made.body.id as string}`;
    const narrowed = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', manager.auth).send({ permissions: ['tasks.list'] }));
    expectOutranked(narrowed, ['users.create']);
    expectContractResponse(narrowed, 'PATCH', path);
    const deleted = await refusedWithoutChange(database.db, () => request(app).delete(path).set('authorization', manager.auth));
    expectOutranked(deleted, ['users.create']);
    expectContractResponse(deleted, 'DELETE', path);
    // Adding what it holds, keeping what it does not, is a grant only.
    const widened = await request(app).patch(path).set('authorization', manager.auth).send({ permissions: ['users.create', 'tasks.list'], description: 'ops' });
    expect(widened.status, widened.text).toBe(200);
  });

  it('a session manager cannot sign an administrator out, but anyone may end their own sessions', async () => {
    const manager = await person(database.db, { permissions: ['sessions.manage'] });
    const path = `/users/${admin.id}/sessions`;
    const res = await refusedWithoutChange(database.db, () => request(app).delete(path).set('authorization', manager.auth));
    expect(res.body.code).toBe('target_outranks_caller');
    expectContractResponse(res, 'DELETE', path);
    const one = await database.db.selectFrom('sessions').select('id').where('user_id', '=', admin.id).executeTakeFirstOrThrow();
    const single = await refusedWithoutChange(database.db, () => request(app).delete(`${path}/${one.id}`).set('authorization', manager.auth));
    expect(single.body.code).toBe('target_outranks_caller');
    expect((await request(app).get('/me').set('authorization', admin.auth)).status).toBe(200);
    expect((await request(app).delete(`/users/${manager.id}/sessions`).set('authorization', manager.auth)).status).toBe(204);
    expect((await request(app).get('/me').set('authorization', manager.auth)).status).toBe(401);
  });

  it('a user and role manager cannot lock out a person holding more by granting them an empty role that requires a second factor', async () => {
    const victim = await person(database.db, { permissions: ['users.read', 'users.update', 'roles.manage', 'audit.read', 'sessions.manage'] });
    const attacker = await person(database.db, { permissions: ['users.read', 'users.update', 'users.create', 'roles.manage'] });
    const gate = await request(app).post('/roles').set('authorization', attacker.auth).send({ name: `gate ${Math.random()}`, permissions: [], requires_second_factor: true });
    expect(gate.status, gate.text).toBe(201);
    const path = `/users/${victim.id}`;
    const current = (await request(app).get(path).set('authorization', attacker.auth)).body.roles as string[];
    const res = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', attacker.auth).send({ roles: [...current, gate.body.name] }));
    expectOutranked(res, ['audit.read', 'sessions.manage']);
    expectContractResponse(res, 'PATCH', path);
    expect((await request(app).get('/audit-events').set('authorization', victim.auth)).status).toBe(200);
    // A person holding nothing more, a new person, and a person a role of theirs already requires
    // a second factor of (it changes nothing for them) may be given the role.
    const peer = await createUser(database.db, { permissions: ['users.read'] });
    const toPeer = await request(app).patch(`/users/${peer.id}`).set('authorization', attacker.auth).send({ roles: [`role-${peer.id}`, gate.body.name] });
    expect(toPeer.status, toPeer.text).toBe(200);
    const created = await request(app).post('/users').set('authorization', attacker.auth).send({ email: `gated-${Math.random()}@example.com`, first_name: 'G', last_name: 'R', roles: [gate.body.name] });
    expect(created.status, created.text).toBe(201);
    const guarded = await createUser(database.db, { permissions: ['audit.read'] });
    await database.db.updateTable('roles').set({ requires_second_factor: true }).where('name', '=', `role-${guarded.id}`).execute();
    const toGuarded = await request(app).patch(`/users/${guarded.id}`).set('authorization', attacker.auth).send({ roles: [`role-${guarded.id}`, gate.body.name] });
    expect(toGuarded.status, toGuarded.text).toBe(200);
  });

  it('refuses bad input with problem+json and changes nothing', async () => {
    const path = `/users/${admin.id}`;
    for (const body of [{ roles: 'admin' }, { roles: [''] }, { status: 'gone' }, {}]) {
      const res = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', admin.auth).send(body));
      expect(res.status).toBe(400);
    }
    const unknownRole = await refusedWithoutChange(database.db, () => request(app).patch(path).set('authorization', admin.auth).send({ roles: ['no such role'] }));
    expect(unknownRole.body.code).toBe('unknown_role');
  });
});

/**
 * Runs `send` while another transaction holds open the change `prepare` makes on its connection (an
 * administrator's concurrent change, locked and written as the service does it, not committed yet);
 * that transaction commits once `send`'s request has answered or is waiting for a lock. So the
 * request is judged either before the change (it did not wait) or after it (it waited), never on a
 * state the change is about to replace.
 */
async function whileChangeIsOpen(prepare: (other: PoolClient) => Promise<void>, send: () => request.Test): Promise<request.Response> {
  const other = await database.pool.connect();
  try {
    await other.query('begin');
    await prepare(other);
    let settled = false;
    const pending = send().then((res) => {
      settled = true;
      return res;
    });
    const waiting = async () =>
      (await database.pool.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount! > 0;
    while (!settled && !(await waiting())) await new Promise((resolve) => setTimeout(resolve, 20));
    await other.query('commit');
    return await pending;
  } finally {
    other.release();
  }
}

/** `send` while an administrator adds `added` to role `roleId` (PATCH /roles/{id}: the role row locked, its permissions replaced). */
function whileRoleGainsPermission(roleId: string, added: string, send: () => request.Test): Promise<request.Response> {
  return whileChangeIsOpen(async (other) => {
    await other.query('select id from roles where id = $1 for update', [roleId]);
    await other.query('insert into role_permissions (role_id, permission) values ($1, $2)', [roleId, added]);
    await other.query('update roles set updated_at = now() where id = $1', [roleId]);
  }, send);
}

/** `send` while an administrator grants the admin role to `userId` (PATCH /users/{id}: the user row locked, its roles replaced). */
function whileUserBecomesAdmin(userId: string, send: () => request.Test): Promise<request.Response> {
  return whileChangeIsOpen(async (other) => {
    await other.query('select id from users where id = $1 for update', [userId]);
    await other.query(`insert into user_roles (user_id, role_id) select $1, id from roles where built_in and name = 'admin'`, [userId]);
    await other.query('update users set updated_at = now() where id = $1', [userId]);
  }, send);
}

describe('concurrent changes: the target is judged on what it holds when the change is written', () => {
  it('a role manager racing an administrator who adds a permission to a role cannot strip it by narrowing the role', async () => {
    const manager = await person(database.db, { permissions: ['roles.manage', 'tasks.list'] });
    const role = await makeRole(database.db, ['tasks.list']);
    const res = await whileRoleGainsPermission(role.id, 'users.create', () =>
      request(app).patch(`/roles/${role.id}`).set('authorization', manager.auth).send({ permissions: [] }),
    );
    expectOutranked(res, ['users.create']);
    const kept = await database.db.selectFrom('role_permissions').select('permission').where('role_id', '=', role.id).orderBy('permission').execute();
    expect(kept.map((r) => r.permission)).toEqual(['tasks.list', 'users.create']);
  });

  it('a role manager racing an administrator who adds a permission to a role cannot strip it by deleting the role', async () => {
    const manager = await person(database.db, { permissions: ['roles.manage', 'tasks.list'] });
    const role = await makeRole(database.db, ['tasks.list']);
    const res = await whileRoleGainsPermission(role.id, 'users.create', () => request(app).delete(`/roles/${role.id}`).set('authorization', manager.auth));
    expectOutranked(res, ['users.create']);
    expect(await database.db.selectFrom('roles').select('id').where('id', '=', role.id).executeTakeFirst()).toBeDefined();
  });

  it('a user manager racing an administrator who adds a permission to a user\u2019s role cannot strip it by removing the role', async () => {
    const manager = await person(database.db, { permissions: ['users.update', 'tasks.list'] });
    const role = await makeRole(database.db, ['tasks.list']);
    const target = await createUser(database.db, { roles: [role.name] });
    const res = await whileRoleGainsPermission(role.id, 'users.create', () =>
      request(app).patch(`/users/${target.id}`).set('authorization', manager.auth).send({ roles: [] }),
    );
    expectOutranked(res, ['users.create']);
    const held = await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', target.id).execute();
    expect(held.map((r) => r.role_id)).toEqual([role.id]);
  });

  it('a user manager racing an administrator who adds a permission to a role cannot hand that permission out by granting the role', async () => {
    const manager = await person(database.db, { permissions: ['users.update', 'users.create', 'tasks.list'] });
    const target = await createUser(database.db, { permissions: [] });
    for (const [method, send] of [
      ['PATCH', (role: string) => request(app).patch(`/users/${target.id}`).set('authorization', manager.auth).send({ roles: [role] })],
      ['POST', (role: string) => request(app).post('/users').set('authorization', manager.auth).send({ email: `granted-${Math.random()}@example.com`, first_name: 'G', last_name: 'R', roles: [role] })],
    ] as const) {
      const role = await makeRole(database.db, ['tasks.list']);
      const res = await whileRoleGainsPermission(role.id, 'roles.manage', () => send(role.name));
      expect(res.status, `${method}: ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'permission_denied', required_permission: 'roles.manage', missing_permissions: ['roles.manage'] });
      const holders = await database.db.selectFrom('user_roles').select('user_id').where('role_id', '=', role.id).execute();
      expect(holders, method).toEqual([]);
    }
  });

  it('a session manager racing an administrator who makes the target an administrator cannot sign the target out', async () => {
    const manager = await person(database.db, { permissions: ['sessions.manage', 'tasks.list'] });
    for (const one of [false, true]) {
      const target = await person(database.db, { permissions: ['tasks.list'] });
      const session = await database.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).executeTakeFirstOrThrow();
      const path = one ? `/users/${target.id}/sessions/${session.id}` : `/users/${target.id}/sessions`;
      const res = await whileUserBecomesAdmin(target.id, () => request(app).delete(path).set('authorization', manager.auth));
      expectOutranked(res, missingBesides(['sessions.manage', 'tasks.list']));
      expectContractResponse(res, 'DELETE', path);
      expect((await request(app).get('/me').set('authorization', target.auth)).status).toBe(200);
      expect(await revocationsOf(target.id)).toEqual([]);
    }
  });

  it('a session manager racing an administrator who adds a permission to the target\u2019s role cannot sign the target out', async () => {
    const manager = await person(database.db, { permissions: ['sessions.manage', 'tasks.list'] });
    for (const one of [false, true]) {
      const role = await makeRole(database.db, ['tasks.list']);
      const user = await createUser(database.db, { roles: [role.name] });
      const set = await signIn(app, user.email, user.password);
      const session = await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
      const path = one ? `/users/${user.id}/sessions/${session.id}` : `/users/${user.id}/sessions`;
      const res = await whileRoleGainsPermission(role.id, 'users.create', () => request(app).delete(path).set('authorization', manager.auth));
      expectOutranked(res, ['users.create']);
      expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);
      expect(await revocationsOf(user.id)).toEqual([]);
    }
  });
});

describe('concurrent changes: a role that requires a second factor is judged on its holders when the change is written', () => {
  /** `send` while an administrator grants `userId` the role `roleId` (PATCH /users/{id}: the user row locked, a role added). */
  const whileUserGainsRole = (userId: string, roleId: string, send: () => request.Test) =>
    whileChangeIsOpen(async (other) => {
      await other.query('select id from users where id = $1 for update', [userId]);
      await other.query('select id from roles where id = $1 for share', [roleId]);
      await other.query('insert into user_roles (user_id, role_id) values ($1, $2)', [userId, roleId]);
      await other.query('update users set updated_at = now() where id = $1', [userId]);
    }, send);

  it('a role manager racing an administrator who gives a holder more cannot lift the requirement, by PATCH or by DELETE', async () => {
    const manager = await person(database.db, { permissions: ['roles.manage', 'tasks.list'] });
    for (const method of ['PATCH', 'DELETE'] as const) {
      const policy = await makeRole(database.db, []);
      await database.db.updateTable('roles').set({ requires_second_factor: true }).where('id', '=', policy.id).execute();
      const holder = await createUser(database.db, { permissions: ['tasks.list'] });
      await database.db.insertInto('user_roles').values({ user_id: holder.id, role_id: policy.id }).execute();
      const more = await makeRole(database.db, ['audit.read']);
      const path = `/roles/${policy.id}`;
      const res = await whileUserGainsRole(holder.id, more.id, () =>
        method === 'PATCH' ? request(app).patch(path).set('authorization', manager.auth).send({ requires_second_factor: false }) : request(app).delete(path).set('authorization', manager.auth),
      );
      expectOutranked(res, ['audit.read']);
      const kept = await database.db.selectFrom('roles').select('requires_second_factor').where('id', '=', policy.id).executeTakeFirst();
      expect(kept, method).toEqual({ requires_second_factor: true });
    }
  });
});

describe('there is always an administrator', () => {
  let own: TestDatabase;
  let ownApp: typeof app;
  beforeAll(async () => {
    own = await createTestDatabase();
    ownApp = createTestApp(own.db).app;
  });
  afterAll(() => own.destroy());

  it('the last active administrator cannot remove its own admin role nor disable itself', async () => {
    const only = await person(own.db, { roles: ['admin'] }, ownApp);
    const path = `/users/${only.id}`;
    for (const [method, attempt] of [
      ['PATCH', () => request(ownApp).patch(path).set('authorization', only.auth).send({ roles: [] })],
      ['PATCH', () => request(ownApp).patch(path).set('authorization', only.auth).send({ status: 'disabled' })],
      ['DELETE', () => request(ownApp).delete(path).set('authorization', only.auth)],
    ] as const) {
      const res = await refusedWithoutChange(own.db, attempt);
      expect(res.status, res.text).toBe(409);
      expect(res.body.code).toBe('last_admin');
      expectContractResponse(res, method, path);
    }
    // With a second administrator, it may step down.
    await createUser(own.db, { roles: ['admin'] });
    expect((await request(ownApp).patch(path).set('authorization', only.auth).send({ roles: [] })).status).toBe(200);
  });

  it('two administrators demoting each other at the same moment leave one administrator', async () => {
    for (let round = 0; round < 5; round++) {
      await own.db.deleteFrom('user_roles').execute();
      const a = await person(own.db, { roles: ['admin'] }, ownApp);
      const b = await person(own.db, { roles: ['admin'] }, ownApp);
      const answers = await Promise.all([
        request(ownApp).patch(`/users/${b.id}`).set('authorization', a.auth).send({ roles: [] }),
        round % 2 === 0
          ? request(ownApp).patch(`/users/${a.id}`).set('authorization', b.auth).send({ roles: [] })
          : request(ownApp).delete(`/users/${a.id}`).set('authorization', b.auth),
      ]);
      // The loser may also find itself demoted already (403: its target now outranks it, or 401).
      expect(answers.filter((r) => r.status === 200), answers.map((r) => r.text).join('\n')).toHaveLength(1);
      const admins = await own.db
        .selectFrom('user_roles as ur')
        .innerJoin('roles as r', 'r.id', 'ur.role_id')
        .innerJoin('users as u', 'u.id', 'ur.user_id')
        .where('r.name', '=', 'admin')
        .where('u.status', '=', 'active')
        .select('u.id')
        .execute();
      expect(admins).toHaveLength(1);
    }
  });
});

describe('a key is never worth more than its creator now', () => {
  it('a key loses what its creator loses, stops when the creator is disabled, and shows it', async () => {
    const creator = await createUser(database.db, { permissions: ['api_keys.manage', 'users.list', 'users.create'] });
    const set = await signIn(app, creator.email, creator.password);
    await steppedUpInDatabase(database.db, creator.id);
    const made = await request(app).post('/api-keys').set('authorization', `Bearer ${set.access_token}`).send({ name: `leaver ${Math.random()}`, permissions: ['users.list', 'users.create'] });
    expect(made.status, made.text).toBe(201);
    const key = made.body.secret as string;
    const id = made.body.api_key.id as string;
    const newUser = () => request(app).post('/users').set('x-api-key', key).send({ email: `k${Math.random()}@example.com`, first_name: 'K', last_name: 'Ey' });
    expect((await newUser()).status).toBe(201);

    // The creator loses users.create: so does the key, on its very next request.
    const role = await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', creator.id).executeTakeFirstOrThrow();
    const cut = await request(app).patch(`/roles/${role.role_id}`).set('authorization', admin.auth).send({ permissions: ['api_keys.manage', 'users.list'] });
    expect(cut.status, cut.text).toBe(200);
    const refused = await newUser();
    expect(refused.status).toBe(403);
    expect(refused.body.required_permission).toBe('users.create');
    expect((await request(app).get('/users').set('x-api-key', key)).status).toBe(200);
    const shown = await request(app).get(`/api-keys/${id}`).set('authorization', admin.auth);
    expect(shown.body).toMatchObject({ permissions: ['users.list', 'users.create'], effective_permissions: ['users.list'] });

    // The creator leaves: the key stops, saying why.
    expect((await request(app).delete(`/users/${creator.id}`).set('authorization', admin.auth)).status).toBe(200);
    const stopped = await request(app).get('/users').set('x-api-key', key);
    expect(stopped.status).toBe(401);
    expect(stopped.body.code).toBe('api_key_creator_disabled');
    expectContractResponse(stopped, 'GET', '/users');
    const after = await request(app).get(`/api-keys/${id}`).set('authorization', admin.auth);
    expect(after.body).toMatchObject({ effective_permissions: [], creator: { id: creator.id, status: 'disabled' } });
    expectContractResponse(after, 'GET', `/api-keys/${id}`);
  });

  it('a key manager cannot keep a working key after leaving by rotating someone else\u2019s key: the rotated key is bound to who holds its secret', async () => {
    const manager = await createUser(database.db, { permissions: ['api_keys.manage', 'users.list'] });
    const set = await signIn(app, manager.email, manager.password);
    await steppedUpInDatabase(database.db, manager.id);
    for (const key of [await adminKey(['users.list']), await makeApiKey(database.db, ['users.list']).then((k) => ({ api_key: { id: k.id } }))]) {
      const rotated = await request(app).post(`/api-keys/${key.api_key.id}/rotate`).set('authorization', `Bearer ${set.access_token}`).send({});
      expect(rotated.status, rotated.text).toBe(200);
      expect(rotated.body.api_key).toMatchObject({ created_by: manager.id, creator: { id: manager.id } });
      expectContractResponse(rotated, 'POST', `/api-keys/${key.api_key.id}/rotate`);
    }
    const stolen = (await request(app).post(`/api-keys/${(await adminKey(['users.list'])).api_key.id}/rotate`).set('authorization', `Bearer ${set.access_token}`).send({})).body.secret as string;
    expect((await request(app).get('/users').set('x-api-key', stolen)).status).toBe(200);
    // The manager leaves: the secret it took with it stops, as a key it created would.
    expect((await request(app).delete(`/users/${manager.id}`).set('authorization', admin.auth)).status).toBe(200);
    const after = await request(app).get('/users').set('x-api-key', stolen);
    expect(after.status, after.text).toBe(401);
    expect(after.body.code).toBe('api_key_creator_disabled');
  });

  it('an operator key (created from the command line) keeps its own set', async () => {
    const operatorKey = await makeApiKey(database.db, ['users.list', 'users.create']);
    const shown = await request(app).get(`/api-keys/${operatorKey.id}`).set('authorization', admin.auth);
    expect(shown.body).toMatchObject({ created_by: null, creator: null, effective_permissions: ['users.list', 'users.create'] });
    expect((await request(app).get('/users').set('x-api-key', operatorKey.secret)).status).toBe(200);
  });

  it('deleting a creator\u2019s row cannot turn its keys into operator keys: the database refuses', async () => {
    const creator = await createUser(database.db, { permissions: ['api_keys.manage', 'users.list'] });
    const set = await signIn(app, creator.email, creator.password);
    await steppedUpInDatabase(database.db, creator.id);
    const made = await request(app).post('/api-keys').set('authorization', `Bearer ${set.access_token}`).send({ name: `orphan ${Math.random()}`, permissions: ['users.list'] });
    expect(made.status, made.text).toBe(201);
    await expect(database.db.deleteFrom('users').where('id', '=', creator.id).execute()).rejects.toThrow(/api_keys_created_by_fkey/);
    const key = await database.db.selectFrom('api_keys').select('created_by').where('id', '=', made.body.api_key.id).executeTakeFirstOrThrow();
    expect(key.created_by).toBe(creator.id);
  });
});
