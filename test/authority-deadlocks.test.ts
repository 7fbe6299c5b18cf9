// Rights-changing operations run two at a time, in every pair and lock order, never deadlock and
// never let a caller past the authority rule (docs/AUTH.md): on the real service and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { makeApiKey, makeRole, makeUser } from './support/access-fixtures.js';
import { PATCH_OP, SCIM } from './support/scim.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());


// Deadlocks an attacker could provoke: two requests taking the same rows in opposite orders make
// PostgreSQL abort one of them (40P01), a 500. Every rights-changing operation is run for real
// while another transaction, taking the locks another operation takes in the order the service
// takes them (mirrored below, as test/escalation.test.ts mirrors an administrator's change), holds
// the first k of them; once the request answered or waits for a lock, that transaction takes the
// rest, then rolls back. Any cycle shows as a deadlock error on one side or a 500 on the other.
describe('security: deadlocks: every pair of rights-changing operations, in every lock order', () => {
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
  /** A directory's provisioning key, holding what the fixtures' roles hold. */
  let directoryAuth: string;
  beforeAll(async () => {
    app = createTestApp(database.db).app;
    const admin = await createUser(database.db, { roles: ['admin'] });
    adminAuth = `Bearer ${(await signIn(app, admin.email, admin.password)).access_token}`;
    directoryAuth = `Bearer ${(await makeApiKey(database.db, ['scim.provision', 'tasks.list', 'users.list'])).secret}`;
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
    'requiring a second factor for the user\u2019s role': (f) => [
      ['select id from users where id = $1 for share', [f.user.id]],
      ['select id from roles where id = $1 for update', [f.r.id]],
      ['update roles set requires_second_factor = true, updated_at = now() where id = $1', [f.r.id]],
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
    'a directory taking the user out of the role\u2019s group': (f) => [
      ['select id from users where id = $1 for update', [f.user.id]],
      ['select id from roles where id = $1 for share', [f.r.id]],
      [rolesOfUserForShare, [f.user.id]],
      ['update users set updated_at = now() where id = $1', [f.user.id]],
      ['delete from user_roles where user_id = $1 and role_id = $2', [f.user.id, f.r.id]],
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
    'PATCH /roles/{id} requiring a second factor': (f) => request(app).patch(`/roles/${f.r.id}`).set('authorization', adminAuth).send({ requires_second_factor: true }),
    'POST /users with the roles': (f) => request(app).post('/users').set('authorization', adminAuth).send({ email: `new-${Math.random()}@example.com`, first_name: 'N', last_name: 'U', roles: [f.r.name, f.r2.name] }),
    'POST /tokens by the user': (f) => request(app).post('/tokens').set('authorization', `Bearer ${f.set.access_token}`).send({ refresh_token: f.set.refresh_token }),
    'DELETE /sessions/current by the user': (f) => request(app).delete('/sessions/current').set('authorization', `Bearer ${f.set.access_token}`),
    'DELETE /users/{id}/sessions by the user': (f) => request(app).delete(`/users/${f.user.id}/sessions`).set('authorization', `Bearer ${f.set.access_token}`),
    'PATCH /scim/v2/Groups/{id} taking the user out': (f) =>
      request(app)
        .patch(`/scim/v2/Groups/${f.r.id}`)
        .set({ authorization: directoryAuth, accept: SCIM, 'content-type': SCIM })
        .send(JSON.stringify({ schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${f.user.id}"]` }] })),
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

  it('a role\u2019s second-factor requirement, which locks the people holding it first: no request is aborted, whatever another operation holds', { timeout: 600_000 }, async () => {
    const sides = Object.keys(SIDE).filter((s) => s !== 'demoting another administrator');
    await matrix(false, sides, ['PATCH /roles/{id} requiring a second factor']);
    await matrix(false, ['requiring a second factor for the user\u2019s role'], Object.keys(REQUESTS));
  });

  it('a directory changing a group while its role\u2019s second-factor requirement changes: neither is aborted, whatever the other holds', { timeout: 300_000 }, async () => {
    await matrix(false, ['requiring a second factor for the user\u2019s role'], ['PATCH /scim/v2/Groups/{id} taking the user out']);
    await matrix(false, ['a directory taking the user out of the role\u2019s group'], ['PATCH /roles/{id} requiring a second factor']);
  });

  it('against an administrator (the last-admin lock in play): no request is aborted, whatever another operation holds', { timeout: 300_000 }, async () => {
    const byAdmin = ['DELETE /users/{id}/sessions', 'PATCH /users/{id} roles removed', 'PATCH /users/{id} status', 'DELETE /users/{id}', 'POST /tokens by the user'];
    await matrix(true, ['disabling the user', 'revoking the user\u2019s sessions', 'granting the user a role', 'demoting another administrator', 'the user refreshing'], byAdmin);
  });
});
