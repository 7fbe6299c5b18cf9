// Races between operations that change rights or people, each forced by holding the other
// operation's locks on a second connection (as test/authority-deadlocks.test.ts does) while the
// request runs: the request is judged on what it finally writes over, or refused cleanly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryId, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
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
 * Returns once some statement of the test's database waits for a lock, or `done()` says the
 * racing request answered first; after 20 s at most, so that a busy machine has the time to bring
 * the request to its lock.
 */
async function untilSomeoneWaits(done: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!done() && (await lockWaiters()) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

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
    await untilSomeoneWaits(() => settled);
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

describe('a sign-in at an identity provider racing the provider\u2019s deletion', () => {
  it('attack: the provider is deleted while a new person of its domain signs in through it: no 500, no account linked to nothing', { timeout: 60_000 }, async () => {
    const op = await startHandMadeProvider();
    try {
      const admin = await person([]);
      await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: ADMIN_ROLE_ID }).execute();
      const domain = `gone-${randomUUID().slice(0, 8)}.example`;
      const providerId = await addProvider(app, admin.auth.authorization.slice('Bearer '.length), {
        name: `Gone ${domain}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: [domain], create_unknown_people: true,
      });
      const email = `ada@${domain}`;
      const started = await startSignIn(app, { provider_id: providerId });
      const back = op.authorize(started.authorization_url, { sub: `s-${randomUUID()}`, email, email_verified: true });
      const { res } = await whileHeld(
        [
          ['select id from identity_providers where id = $1 for update', [providerId]],
          ['delete from identity_providers where id = $1', [providerId]],
        ],
        'commit',
        () => request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }),
      );
      expect(res.status, res.text).toBeLessThan(500);
      expect(await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirst()).toBeUndefined();
    } finally {
      await op.close();
    }
  });
});

/**
 * A pause inside a request's transaction: once a query whose tree matches has run (its result not
 * yet handed back), the request waits until `release()`; `reached` resolves then.
 */
class Pause implements KyselyPlugin {
  private armed: ((node: RootOperationNode) => boolean) | undefined;
  private readonly hit = new Set<QueryId>();
  private open: () => void = () => undefined;
  private arrive: () => void = () => undefined;
  reached: Promise<void> = Promise.resolve();
  private gate: Promise<void> = Promise.resolve();
  arm(match: (node: RootOperationNode) => boolean): void {
    this.armed = match;
    this.reached = new Promise((resolve) => (this.arrive = resolve));
    this.gate = new Promise((resolve) => (this.open = resolve));
  }
  release(): void {
    this.open();
  }
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    if (this.armed?.(args.node)) {
      this.armed = undefined;
      this.hit.add(args.queryId);
    }
    return args.node;
  }
  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (this.hit.delete(args.queryId)) {
      this.arrive();
      await this.gate;
    }
    return args.result;
  }
}

const insertsInto = (table: string) => (node: RootOperationNode) => node.kind === 'InsertQueryNode' && JSON.stringify(node.into).includes(`"${table}"`);

describe('invitations racing the erasure of their maker', () => {
  /** Whose erasure (by an administrator holding users.erase, stepped up) and whose invitation (by a pausable app). */
  async function setting() {
    const pause = new Pause();
    const paused = createTestApp(database.db.withPlugin(pause), { clock: systemClock }).app;
    const eraser = await person(['users.erase', 'users.read', 'invitations.manage', 'users.create', 'tasks.list']);
    const maker = await person(['invitations.manage', 'users.create', 'tasks.list']);
    const uniqueName = `Zeph${randomUUID().slice(0, 8)}`;
    await database.db.updateTable('users').set({ first_name: uniqueName }).where('id', '=', maker.id).execute();
    const role = await makeRole(database.db, ['tasks.list'], `invited-${randomUUID().slice(0, 8)}`);
    return { pause, paused, eraser, maker, uniqueName, role };
  }
  const messagesNaming = async (name: string) =>
    (await database.db.selectFrom('messages').select('recipient').where((eb) => eb.or([eb('body', 'like', `%${name}%`), eb('html', 'like', `%${name}%`), eb('subject', 'like', `%${name}%`)])).execute()).map((m) => m.recipient);

  it('attack: a person is erased while their own invitation is being written: no message naming them outlives the erasure', { timeout: 60_000 }, async () => {
    const { pause, paused, eraser, maker, uniqueName, role } = await setting();
    const email = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    pause.arm(insertsInto('messages'));
    const inviting = request(paused).post('/invitations').set(maker.auth).send({ email, roles: [role.name] }).then((res) => res);
    await pause.reached;
    // The erasure runs while the invitation's transaction is open (its message written, not committed).
    const erasing = request(app).post(`/users/${maker.id}/erasure`).set(eraser.auth).then((res) => res);
    let settled = false;
    void erasing.then(() => (settled = true));
    await untilSomeoneWaits(() => settled);
    pause.release();
    const [invited, erased] = await Promise.all([inviting, erasing]);
    expect(erased.status, erased.text).toBe(200);
    expect(invited.status, invited.text).toBeLessThan(500);
    expect(await messagesNaming(uniqueName)).toEqual([]);
  });

  it('attack: an invitation is resent while its maker is erased: no 500, no message naming them outlives the erasure', { timeout: 60_000 }, async () => {
    const { pause, paused, eraser, maker, uniqueName, role } = await setting();
    const email = `invitee-${randomUUID().slice(0, 8)}@example.com`;
    const made = await request(app).post('/invitations').set(maker.auth).send({ email, roles: [role.name] });
    expect(made.status, made.text).toBe(201);
    // Resent by another manager, paused once its new message is written.
    pause.arm(insertsInto('messages'));
    const resending = request(paused).post(`/invitations/${made.body.id}/resend`).set(eraser.auth).then((res) => res);
    const erasing = request(app).post(`/users/${maker.id}/erasure`).set(eraser.auth).then((res) => res);
    let settled = false;
    void erasing.then(() => (settled = true));
    await Promise.race([pause.reached, resending]);
    await untilSomeoneWaits(() => settled);
    pause.release();
    const [resent, erased] = await Promise.all([resending, erasing]);
    expect(erased.status, erased.text).toBe(200);
    expect(resent.status, resent.text).toBeLessThan(500);
    expect(await messagesNaming(uniqueName)).toEqual([]);
  });
});
