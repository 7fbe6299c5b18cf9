// Races between operations that change rights or people, each forced by holding the other
// operation's locks on a second connection (as test/authority-deadlocks.test.ts does) while the
// request runs: the request is judged on what it finally writes over, or refused cleanly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { makeRole } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { systemClock } from '../src/clock.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';
import { addProvider, startHandMadeProvider, startSignIn } from './support/oidc.js';

type App = ReturnType<typeof createTestApp>['app'];

let database: TestDatabase;
let app: App;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createTestApp(database.db, { clock: systemClock }));
});
afterAll(() => database.destroy());

const lockWaiters = async () =>
  (await database.pool.query(`select 1 from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)).rowCount!;

/**
 * `send()` while another transaction has run `held` (and keeps its locks); once the request waits
 * for a lock (or has answered), that transaction ends by `end` (commit or rollback).
 */
async function whileHeld(held: [string, unknown[]][], end: 'commit' | 'rollback', send: () => request.Test) {
  const other: pg.PoolClient = await database.pool.connect();
  try {
    await other.query('begin');
    for (const [text, values] of held) await other.query(text, values);
    let settled = false;
    const pending = send().then((res) => ((settled = true), res));
    const deadline = Date.now() + 10_000;
    while (!settled && (await lockWaiters()) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    const waited = !settled;
    await other.query(end);
    return { res: await pending, waited };
  } finally {
    other.release();
  }
}

/** A signed-in, stepped-up person holding these permissions. */
async function person(permissions: string[]) {
  const made = await createUser(database.db, { permissions });
  const tokens = await signIn(app, made.email, made.password);
  await steppedUpInDatabase(database.db, made.id);
  return { ...made, auth: { authorization: `Bearer ${tokens.access_token}` } };
}

async function tokenSentTo(email: string): Promise<string> {
  const message = await database.db.selectFrom('messages').select('body').where('recipient', '=', email).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();
  return decodeURIComponent(/#\/invitation\?token=(boi_[0-9A-Za-z_]+)/.exec(message.body)![1]!);
}

describe('invitation acceptance racing a change of the invited role', () => {
  async function invitation() {
    const role = await makeRole(database.db, ['tasks.list'], `invited-${randomUUID().slice(0, 8)}`);
    const maker = await person(['invitations.manage', 'users.create', 'tasks.list']);
    const email = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    const res = await request(app).post('/invitations').set(maker.auth).send({ email, roles: [role.name] });
    expect(res.status, res.text).toBe(201);
    return { role, email, token: await tokenSentTo(email) };
  }
  const accept = (token: string) => request(app).post('/invitations/accept').send({ token, first_name: 'Grace', last_name: 'Hopper', password: 'correct horse battery staple' });

  it('attack: the invited role is deleted while the invitation is accepted: no 500, no account with a half-granted role', async () => {
    const { role, email, token } = await invitation();
    const { res } = await whileHeld(
      [
        ['select id from roles where id = $1 for update', [role.id]],
        ['delete from roles where id = $1', [role.id]],
      ],
      'commit',
      () => accept(token),
    );
    expect(res.status, res.text).toBeLessThan(500);
    const user = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
    if (res.status === 201) {
      const held = await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', user!.id).execute();
      expect(held).toEqual([]);
    } else {
      expect(user).toBeUndefined();
    }
  });

  it('attack: a permission its maker lacks is added to the invited role while the invitation is accepted: the account is not made with it', async () => {
    const { role, email, token } = await invitation();
    const { res } = await whileHeld(
      [
        ['select id from roles where id = $1 for update', [role.id]],
        ['update roles set updated_at = now() where id = $1', [role.id]],
        ["insert into role_permissions (role_id, permission) values ($1, 'audit.read')", [role.id]],
      ],
      'commit',
      () => accept(token),
    );
    // Judged on the role as it is once the change commits: the maker cannot grant audit.read.
    expect(res.status, res.text).toBe(400);
    expect(res.body.error_code ?? res.body.code).toBe('invalid_invitation');
    expect(await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
  });
});

describe('a sign-in at an identity provider racing the deletion of a role its groups map to', () => {
  it('attack: the mapped role is deleted while a person signs in with that group: no 500, no role half-granted', { timeout: 60_000 }, async () => {
    const op = await startHandMadeProvider();
    try {
      const admin = await person([]);
      await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: ADMIN_ROLE_ID }).execute();
      const role = await makeRole(database.db, ['tasks.list'], `mapped-${randomUUID().slice(0, 8)}`);
      const domain = `corp-${randomUUID().slice(0, 8)}.example`;
      const providerId = await addProvider(app, admin.auth.authorization.slice('Bearer '.length), {
        name: `Corp ${domain}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: [domain], create_unknown_people: true,
        role_mappings: [{ group: 'team', roles: [role.name] }],
      });
      const email = `ada@${domain}`;
      const started = await startSignIn(app, { provider_id: providerId });
      const back = op.authorize(started.authorization_url, { sub: `s-${randomUUID()}`, email, email_verified: true, groups: ['team'] });
      const { res } = await whileHeld(
        [
          ['select id from roles where id = $1 for update', [role.id]],
          ['delete from roles where id = $1', [role.id]],
        ],
        'commit',
        () => request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }),
      );
      expect(res.status, res.text).toBeLessThan(500);
      const user = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst();
      if (user) expect(await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', user.id).execute()).toEqual([]);
    } finally {
      await op.close();
    }
  });
});
