// Resetting someone's second factors (a lost phone): by the operator's command line for the last
// administrator, through the service by someone who does not outrank the person (refused), and
// through the API (DELETE /users/{id}/second-factors) as an attacker would try it.
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, signInWithTotp } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { adminRoleId } from './support/access-fixtures.js';
import { resetSecondFactors } from '../src/auth/second-factors/reset.js';
import { revokeSessions } from '../src/auth/sessions/revocation.js';
import { ManualClock, systemClock } from '../src/clock.js';
import { budget } from './support/budgets.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { DomainError } from '../src/errors.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-15T10:00:00.000Z');
const ORIGIN = { requestId: null, ip: '192.0.2.5', userAgent: 'vitest' };
const tableCounts = async (userId: string) => ({
  factors: (await database.db.selectFrom('second_factors').select('id').where('user_id', '=', userId).execute()).length,
  codes: (await database.db.selectFrom('recovery_codes').select('digest').where('user_id', '=', userId).execute()).length,
});

async function enrolledAdministrator() {
  const clock = new ManualClock(START);
  const { app } = createTestApp(database.db, { clock });
  const admin = await createUser(database.db);
  await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: await adminRoleId(database.db) }).execute();
  const set = await signIn(app, admin.email, admin.password);
  await enrolTotp(app, set.access_token, clock, admin.password);
  return { app, admin, set };
}

describe('resetting second factors', { timeout: budget({ passwordHash: 5, cliRun: 1 }) }, () => {
  it('a reset by someone who does not outrank the person is refused, changing nothing', async () => {
    const { admin } = await enrolledAdministrator();
    const manager = await createUser(database.db, { permissions: ['users.update', 'sessions.manage'] });
    const authority = { kind: 'user' as const, userId: manager.id, sessionId: '00000000-0000-4000-8000-00000000e55e', permissions: new Set(['users.update', 'sessions.manage']) };
    const before = await tableCounts(admin.id);
    const refused = await resetSecondFactors({ db: database.db, clock: systemClock }, revokeSessions, authority, admin.id, ORIGIN).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe('target_outranks_caller');
    expect(await tableCounts(admin.id)).toEqual(before);
    expect(before).toEqual({ factors: 1, codes: 10 });
    // Another administrator (holding every permission) may.
    const peer = { kind: 'user' as const, userId: manager.id, sessionId: authority.sessionId, permissions: new Set<string>(PERMISSIONS) };
    expect(await resetSecondFactors({ db: database.db, clock: systemClock }, revokeSessions, peer, admin.id, ORIGIN)).toBe('reset');
    expect(await tableCounts(admin.id)).toEqual({ factors: 0, codes: 0 });
  });

  it('the operator resets the last administrator from the command line: factors, codes and sessions go', async () => {
    const { app, admin, set } = await enrolledAdministrator();
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'users', 'reset-second-factor', '--email', admin.email], {
      env: { ...process.env, DATABASE_URL: database.url },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toContain('Reset the second factors');
    expect(await tableCounts(admin.id)).toEqual({ factors: 0, codes: 0 });
    // The session that existed is over; the password alone signs in again, and enrolling comes next.
    expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(401);
    expect((await request(app).post('/sessions').send({ session: { email: admin.email, password: admin.password } })).status).toBe(201);
    const events = await database.db.selectFrom('security_events').selectAll().where('user_id', '=', admin.id).where('type', '=', 'second_factors_reset').execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_type: 'cli', details: { factors: 1 } });
    const revoked = await database.db.selectFrom('sessions').select('revoked_reason').where('user_id', '=', admin.id).where('revoked_at', 'is not', null).execute();
    expect(revoked.map((s) => s.revoked_reason)).toContain('second_factors_reset');
  });
});

/** A person holding `permissions` (through a role of their own), signed in with the password and stepped up. */
async function resetter(app: Parameters<typeof request>[0], permissions: string[], options: { steppedUp?: boolean } = {}) {
  const person = await createUser(database.db, { permissions });
  const set = await signIn(app, person.email, person.password);
  // Stepped up at the app's clock (the shared helper writes the wall clock's time).
  if (options.steppedUp !== false) await database.db.updateTable('sessions').set({ stepped_up_at: START, step_up_method: 'password' }).where('user_id', '=', person.id).execute();
  return { ...person, token: set.access_token };
}

/** A colleague holding `permissions` who enrolled an authenticator app, with a live session. */
async function enrolledColleague(permissions: string[]) {
  const clock = new ManualClock(START);
  const { app } = createTestApp(database.db, { clock });
  const person = await createUser(database.db, { permissions });
  const first = await signIn(app, person.email, person.password);
  const { secret } = await enrolTotp(app, first.access_token, clock, person.password);
  clock.advance(30_000);
  const set = await signInWithTotp(app, person, secret, clock);
  return { app, clock, person, set };
}

const reset = (app: Parameters<typeof request>[0], token: string, id: string, path = 'users/{id}/second-factors') =>
  request(app).delete('/' + path.replace('{id}', id)).set('authorization', `Bearer ${token}`);

describe('DELETE /users/{id}/second-factors', { timeout: budget({ passwordHash: 8 }) }, () => {
  it("an administrator resets a colleague's second factors: factors, codes and sessions go, and it is recorded", async () => {
    const { app, person, set } = await enrolledColleague(['users.list']);
    const caller = await resetter(app, ['users.reset_second_factors', 'users.list']);
    const res = await reset(app, caller.token, person.id);
    expect(res.status, res.text).toBe(204);
    expectContractResponse(res, 'DELETE', `/users/${person.id}/second-factors`);
    expect(await tableCounts(person.id)).toEqual({ factors: 0, codes: 0 });
    // The colleague's session is over (whoever took the phone may hold it); the password alone signs in again.
    expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(401);
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(201);
    const events = await database.db.selectFrom('security_events').selectAll().where('user_id', '=', person.id).where('type', '=', 'second_factors_reset').execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_type: 'user', actor_id: caller.id, target_type: 'user', target_id: person.id, details: { factors: 1 } });
    // Nothing left to reset: 204 again, nothing more recorded.
    expect((await reset(app, caller.token, person.id)).status).toBe(204);
    expect(await database.db.selectFrom('security_events').select('id').where('user_id', '=', person.id).where('type', '=', 'second_factors_reset').execute()).toHaveLength(1);
  });

  it('the French path resets as well, and an id in capitals finds the user', async () => {
    const { app, person } = await enrolledColleague([]);
    const caller = await resetter(app, ['users.reset_second_factors']);
    expect((await reset(app, caller.token, person.id.toUpperCase(), 'utilisateurs/{id}/seconds-facteurs')).status).toBe(204);
    expect(await tableCounts(person.id)).toEqual({ factors: 0, codes: 0 });
  });

  it('an administrator without the permission cannot reset anyone, changing nothing', async () => {
    const { app, person, set } = await enrolledColleague([]);
    // Everything about users and sessions, but not this permission.
    const caller = await resetter(app, ['users.list', 'users.read', 'users.update', 'users.disable', 'sessions.manage']);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await reset(app, caller.token, person.id);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'permission_denied', required_permission: 'users.reset_second_factors' });
    expectContractResponse(res, 'DELETE', `/users/${person.id}/second-factors`);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);
  });

  it('a lesser administrator cannot strip the factors of a higher one, changing nothing', async () => {
    const { app, admin, set } = await enrolledAdministrator();
    const caller = await resetter(app, ['users.reset_second_factors', 'users.list', 'sessions.manage']);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await reset(app, caller.token, admin.id);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('target_outranks_caller');
    expect(res.body.missing_permissions).toContain('roles.manage');
    expectContractResponse(res, 'DELETE', `/users/${admin.id}/second-factors`);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    expect(await tableCounts(admin.id)).toEqual({ factors: 1, codes: 10 });
    expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);
  });

  it('a colleague holding one permission more than the resetter cannot be stripped either', async () => {
    const { app, person } = await enrolledColleague(['audit.read']);
    const caller = await resetter(app, ['users.reset_second_factors', 'users.list']);
    const res = await reset(app, caller.token, person.id);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['audit.read'] });
    expect(await tableCounts(person.id)).toEqual({ factors: 1, codes: 10 });
  });

  it("a stolen access token of a resetter cannot strip anyone's factors without a fresh proof", async () => {
    const { app, person } = await enrolledColleague([]);
    const caller = await resetter(app, ['users.reset_second_factors'], { steppedUp: false });
    const res = await reset(app, caller.token, person.id);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'step_up_required', step_up_methods: ['password'] });
    expect(await tableCounts(person.id)).toEqual({ factors: 1, codes: 10 });
  });

  it('probing for users: an unknown id is 404 not_found, changing nothing', async () => {
    const { app } = await enrolledColleague([]);
    const caller = await resetter(app, ['users.reset_second_factors']);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const unknown = await reset(app, caller.token, '0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90');
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('not_found');
    expectContractResponse(unknown, 'DELETE', '/users/0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90/second-factors');
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });
});
