// Resetting someone's second factors (a lost phone): by the operator's command line for the last
// administrator, and through the service by someone who does not outrank the person (refused).
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp } from './support/second-factor.js';
import { adminRoleId } from './support/access-fixtures.js';
import { resetSecondFactors } from '../src/second-factor/reset.js';
import { revokeSessions } from '../src/sessions/revocation.js';
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
