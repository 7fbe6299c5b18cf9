// The second-factor policy with the service's default (ADMIN_SECOND_FACTOR unset, so `required`):
// a holder of the built-in admin role without a second factor may only enrol one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, signInWithTotp, stepUp, totpCode } from './support/second-factor.js';
import { adminRoleId, makeIdentityProvider } from './support/access-fixtures.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { budget } from './support/budgets.js';
import { ManualClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-15T10:00:00.000Z');
/** The service's own default: the variable is not set. */
const DEFAULT_POLICY = { ADMIN_SECOND_FACTOR: undefined };
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

async function administrator() {
  const admin = await createUser(database.db);
  await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: await adminRoleId(database.db) }).execute();
  return admin;
}

describe('ADMIN_SECOND_FACTOR', () => {
  it('is required unless the deployment says otherwise, and refuses anything else', () => {
    expect(loadConfig({}).secondFactor.requiredForAdmins).toBe(true);
    expect(loadConfig({ ADMIN_SECOND_FACTOR: 'optional' }).secondFactor.requiredForAdmins).toBe(false);
    expect(() => loadConfig({ ADMIN_SECOND_FACTOR: 'no' })).toThrow(/ADMIN_SECOND_FACTOR/);
  });
});

// Sign-ins, step-ups by password and users made with one: argon2, slow on a busy machine.
describe('an administrator without a second factor (default policy)', { timeout: budget({ passwordHash: 5 }) }, () => {
  it('signs in with the password (the seed\'s answer) but may only enrol: 403 second_factor_required elsewhere', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock, env: DEFAULT_POLICY });
    const admin = await administrator();
    const set = await signIn(app, admin.email, admin.password);
    for (const [method, path] of [['get', '/users'], ['get', '/me'], ['get', '/roles'], ['post', '/api-keys'], ['get', '/audit-events'], ['get', '/sessions']] as const) {
      const res = await request(app)[method](path).set(auth(set.access_token)).send(method === 'post' ? { name: 'k', permissions: ['users.list'] } : undefined);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.code).toBe('second_factor_required');
    }
    const refused = await request(app).get('/users').set(auth(set.access_token));
    expectContractResponse(refused, 'GET', '/users');
    const overview = await request(app).get('/me/second-factors').set(auth(set.access_token));
    expect(overview.status).toBe(200);
    expect(overview.body).toMatchObject({ required: true, totp: null });
    // Enrolling is what is left, and it lifts the limit on this very session.
    await enrolTotp(app, set.access_token, clock, admin.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
    // From now on the password alone is not enough.
    clock.advance(30_000);
    expect((await request(app).post('/sessions').send({ session: { email: admin.email, password: admin.password } })).status).toBe(202);
  });

  it('removing the last factor puts the administrator back to enrolling only', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock, env: DEFAULT_POLICY });
    const admin = await administrator();
    const first = await signIn(app, admin.email, admin.password);
    const { secret } = await enrolTotp(app, first.access_token, clock, admin.password);
    clock.advance(30_000);
    const set = await signInWithTotp(app, admin, secret, clock);
    clock.advance(30_000);
    expect((await stepUp(app, set.access_token, { totp_code: totpCode(secret, clock.now()) })).status).toBe(200);
    expect((await request(app).delete('/me/totp').set(auth(set.access_token))).status).toBe(204);
    expect((await request(app).get('/users').set(auth(set.access_token))).body.code).toBe('second_factor_required');
  });

  it('signing out and changing the password stay allowed', async () => {
    const { app } = createTestApp(database.db, { env: DEFAULT_POLICY });
    const admin = await administrator();
    const set = await signIn(app, admin.email, admin.password);
    const changed = await request(app).put('/me/password').set(auth(set.access_token)).send({ current_password: admin.password, new_password: 'another long private sentence' });
    expect(changed.status).toBe(204);
    expect((await request(app).delete('/sessions/current').set(auth(set.access_token))).status).toBe(204);
  });

  it('the first administrator changes the password first, then enrols', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock, env: DEFAULT_POLICY });
    const admin = await administrator();
    await database.db.updateTable('users').set({ must_change_password: true }).where('id', '=', admin.id).execute();
    const set = await signIn(app, admin.email, admin.password);
    expect((await request(app).post('/me/totp').set(auth(set.access_token))).body.code).toBe('password_change_required');
    await request(app).put('/me/password').set(auth(set.access_token)).send({ current_password: admin.password, new_password: 'another long private sentence' }).expect(204);
    expect((await request(app).get('/users').set(auth(set.access_token))).body.code).toBe('second_factor_required');
    await enrolTotp(app, set.access_token, clock);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
  });

  it('a person without the admin role is not required to enrol', async () => {
    const { app } = createTestApp(database.db, { env: DEFAULT_POLICY });
    const person = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, person.email, person.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
    expect((await request(app).get('/me/second-factors').set(auth(set.access_token))).body.required).toBe(false);
  });

  it('with ADMIN_SECOND_FACTOR=optional, an administrator without one is let in', async () => {
    const { app } = createTestApp(database.db, { env: { ADMIN_SECOND_FACTOR: 'optional' } });
    const admin = await administrator();
    const set = await signIn(app, admin.email, admin.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
    expect((await request(app).get('/me/second-factors').set(auth(set.access_token))).body.required).toBe(false);
  });
});

describe('a role may require a second factor', { timeout: budget({ passwordHash: 5 }) }, () => {
  it('a holder of any role requiring one, not only admin, is limited to enrolling; the harness optional policy does not free them', async () => {
    const clock = new ManualClock(START);
    // ADMIN_SECOND_FACTOR=optional (the harness) frees the admin role only: a role's own flag still holds.
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, person.email, person.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
    const role = await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', person.id).executeTakeFirstOrThrow();
    await database.db.updateTable('roles').set({ requires_second_factor: true }).where('id', '=', role.role_id).execute();
    const refused = await request(app).get('/users').set(auth(set.access_token));
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('second_factor_required');
    expect((await request(app).get('/me/second-factors').set(auth(set.access_token))).body.required).toBe(true);
    await enrolTotp(app, set.access_token, clock, person.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
  });

  it('the built-in admin role always requires one: the database refuses to lift it, and PATCH /roles refuses any change of it', async () => {
    const adminRole = await adminRoleId(database.db);
    expect((await database.db.selectFrom('roles').select('requires_second_factor').where('id', '=', adminRole).executeTakeFirstOrThrow()).requires_second_factor).toBe(true);
    await expect(database.db.updateTable('roles').set({ requires_second_factor: false }).where('id', '=', adminRole).execute()).rejects.toThrow(/roles_admin_requires_second_factor/);
    const { app } = createTestApp(database.db);
    const admin = await administrator();
    const set = await signIn(app, admin.email, admin.password);
    const res = await request(app).patch(`/roles/${adminRole}`).set(auth(set.access_token)).send({ requires_second_factor: false });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('role_built_in');
  });

  /** A role holding no permission, requiring a second factor or not, held by `holders`. */
  async function emptyRole(requires: boolean, holders: string[]) {
    const name = `policy-${Math.random()}`;
    const role = await database.db.insertInto('roles').values({ name, name_key: name, requires_second_factor: requires }).returning('id').executeTakeFirstOrThrow();
    if (holders.length) await database.db.insertInto('user_roles').values(holders.map((user_id) => ({ user_id, role_id: role.id }))).execute();
    return role.id;
  }

  /** `attempt` answers problem+json and changes no table. */
  async function refusedWithoutChange(attempt: () => Promise<request.Response>) {
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await attempt();
    expect(res.status, res.text).toBeGreaterThanOrEqual(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    return res;
  }

  it('a role manager cannot lift the requirement protecting an administrator by turning off, or deleting, the empty role that carries it', async () => {
    const { app } = createTestApp(database.db);
    const admin = await administrator();
    const manager = await createUser(database.db, { permissions: ['roles.manage'] });
    const set = await signIn(app, manager.email, manager.password);
    const roleId = await emptyRole(true, [admin.id]);
    const missing = PERMISSIONS.filter((p) => p !== 'roles.manage').sort();
    const off = await refusedWithoutChange(() => request(app).patch(`/roles/${roleId}`).set(auth(set.access_token)).send({ requires_second_factor: false }));
    expect(off.status, off.text).toBe(403);
    expect(off.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: missing });
    expectContractResponse(off, 'PATCH', `/roles/${roleId}`);
    const deleted = await refusedWithoutChange(() => request(app).delete(`/roles/${roleId}`).set(auth(set.access_token)));
    expect(deleted.status, deleted.text).toBe(403);
    expect(deleted.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: missing });
    expectContractResponse(deleted, 'DELETE', `/roles/${roleId}`);
    // Other changes of the role stay bounded by its own permissions: a rename, and deleting an
    // empty role that requires nothing, held by the same administrator.
    expect((await request(app).patch(`/roles/${roleId}`).set(auth(set.access_token)).send({ description: 'policy' })).status).toBe(200);
    const plain = await emptyRole(false, [admin.id]);
    expect((await request(app).delete(`/roles/${plain}`).set(auth(set.access_token))).status).toBe(204);
  });

  it('a role manager cannot lock out a person holding more by turning on the requirement of an empty role they hold', async () => {
    const { app } = createTestApp(database.db);
    const victim = await createUser(database.db, { permissions: ['audit.read', 'sessions.manage'] });
    const victimSet = await signIn(app, victim.email, victim.password);
    const manager = await createUser(database.db, { permissions: ['roles.manage', 'sessions.manage'] });
    const set = await signIn(app, manager.email, manager.password);
    const roleId = await emptyRole(false, [victim.id]);
    const on = await refusedWithoutChange(() => request(app).patch(`/roles/${roleId}`).set(auth(set.access_token)).send({ requires_second_factor: true }));
    expect(on.status, on.text).toBe(403);
    expect(on.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['audit.read'] });
    expect((await request(app).get('/audit-events').set(auth(victimSet.access_token))).status).toBe(200);
    // Holders holding nothing more than the manager: the requirement goes on, off, and the role away.
    const peer = await createUser(database.db, { permissions: ['sessions.manage'] });
    const shared = await emptyRole(false, [peer.id]);
    for (const requires of [true, false, true]) {
      const res = await request(app).patch(`/roles/${shared}`).set(auth(set.access_token)).send({ requires_second_factor: requires });
      expect(res.status, res.text).toBe(200);
      expect(res.body.requires_second_factor).toBe(requires);
    }
    expect((await request(app).delete(`/roles/${shared}`).set(auth(set.access_token))).status).toBe(204);
  });

  it('a role mapped by an identity provider is granted to whoever the directory lists: its requirement is the administrators\' to change', async () => {
    const { app } = createTestApp(database.db);
    const manager = await createUser(database.db, { permissions: ['roles.manage'] });
    const set = await signIn(app, manager.email, manager.password);
    const roleId = await emptyRole(false, []);
    const provider = await makeIdentityProvider(database.db, `https://idp-${Math.random()}.example.com`);
    await database.db.insertInto('identity_provider_role_mappings').values({ provider_id: provider, group_name: 'staff', role_id: roleId }).execute();
    const on = await refusedWithoutChange(() => request(app).patch(`/roles/${roleId}`).set(auth(set.access_token)).send({ requires_second_factor: true }));
    expect(on.status, on.text).toBe(403);
    expect(on.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: PERMISSIONS.filter((p) => p !== 'roles.manage').sort() });
  });

  it('a role manager cannot lift the requirement of a role holding more than they do', async () => {
    const { app } = createTestApp(database.db);
    const manager = await createUser(database.db, { permissions: ['roles.manage'] });
    const set = await signIn(app, manager.email, manager.password);
    const role = await database.db.insertInto('roles').values({ name: `guarded-${Date.now()}`, name_key: `guarded-${Date.now()}`, requires_second_factor: true }).returning('id').executeTakeFirstOrThrow();
    await database.db.insertInto('role_permissions').values({ role_id: role.id, permission: 'audit.read' }).execute();
    const res = await request(app).patch(`/roles/${role.id}`).set(auth(set.access_token)).send({ requires_second_factor: false });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['audit.read'] });
    expectContractResponse(res, 'PATCH', `/roles/${role.id}`);
    // A role holding nothing more: allowed, shown, recorded.
    const own = await request(app).post('/roles').set(auth(set.access_token)).send({ name: `own-${Date.now()}`, permissions: ['roles.manage'], requires_second_factor: true });
    expect(own.status, own.text).toBe(201);
    expect(own.body.requires_second_factor).toBe(true);
    const lifted = await request(app).patch(`/roles/${own.body.id}`).set(auth(set.access_token)).send({ requires_second_factor: false });
    expect(lifted.status, lifted.text).toBe(200);
    expect(lifted.body.requires_second_factor).toBe(false);
    expectContractResponse(lifted, 'PATCH', `/roles/${own.body.id}`);
  });
});
