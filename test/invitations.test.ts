// Invitations: an administrator invites a person by e-mail with roles; the message with its link
// is written in the same transaction (the messages outbox); the person follows the link, chooses
// their own password and is signed in with the invited roles. And the attacks on it: granting
// more than one holds, and every way a token might be used when it must not.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { makeApiKey, makeIdentityProvider, makeRole } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { systemClock } from '../src/clock.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';

type App = ReturnType<typeof createTestApp>['app'];
type Credential = Record<string, string>;

let database: TestDatabase;
let app: App;
/** A person holding invitations.manage, users.create and the support role's permissions, stepped up. */
let admin: Credential;
let adminName: string;
/** A role the administrator may grant. */
let support: { id: string; name: string };
/** A role holding a permission the administrator lacks. */
let auditors: { id: string; name: string };

const PASSWORD = 'correct horse battery staple';

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createTestApp(database.db, { clock: systemClock }));
  support = await makeRole(database.db, ['tasks.list', 'tasks.read'], `support-${randomUUID().slice(0, 6)}`);
  auditors = await makeRole(database.db, ['audit.read'], `auditors-${randomUUID().slice(0, 6)}`);
  const person = await createUser(database.db, { permissions: ['invitations.manage', 'users.create', 'tasks.list', 'tasks.read'] });
  const tokens = await signIn(app, person.email, person.password);
  await steppedUpInDatabase(database.db, person.id);
  admin = { authorization: `Bearer ${tokens.access_token}` };
  const row = await database.db.selectFrom('users').select(['first_name', 'last_name']).where('id', '=', person.id).executeTakeFirstOrThrow();
  adminName = `${row.first_name} ${row.last_name}`;
});
afterAll(() => database.destroy());

async function send(method: 'get' | 'post' | 'delete', path: string, credential: Credential, body?: object, headers: Record<string, string> = {}) {
  let req = request(app)[method](path).set(credential).set(headers);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  expectContractResponse(res, method, path);
  return res;
}

const address = () => `invitee-${randomUUID().slice(0, 8)}@example.com`;

async function invite(body: object = {}, credential: Credential = admin) {
  const res = await send('post', '/invitations', credential, { email: address(), roles: [support.name], ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; email: string; roles: string[]; status: string; expires_at: string };
}

/** The link's token, read from the last message sent to `email` (the development mailbox's table). */
async function tokenSentTo(email: string): Promise<string> {
  const message = await database.db.selectFrom('messages').selectAll().where('recipient', '=', email).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
  const match = /#\/invitation\?token=(boi_[0-9A-Za-z_]+)/.exec(message.body);
  expect(match, message.body).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

/** The domain's company now signs its people in through its identity provider (sso_required). */
async function requireSso(domain: string) {
  const provider = await makeIdentityProvider(database.db, `https://idp.${domain}`, [domain]);
  await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
}

const countOf = async (table: 'users' | 'sessions' | 'messages', column: 'email' | 'recipient' | 'user_id', value: string) =>
  Number((await database.db.selectFrom(table).select((eb) => eb.fn.countAll<string>().as('n')).where(column, '=', value).executeTakeFirstOrThrow()).n);

const accept = (token: string, body: object = {}) => send('post', '/invitations/accept', {}, { token, first_name: 'Grace', last_name: 'Hopper', password: PASSWORD, ...body });

describe('the flow', () => {
  it('invites, writes the message in the same transaction, and the person accepts, is signed in with the invited roles', async () => {
    const invitation = await invite({ language: 'fr' });
    expect(invitation).toMatchObject({ roles: [support.name], status: 'pending', user_id: null, accepted_at: null });
    const days = (Date.parse(invitation.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const message = await database.db.selectFrom('messages').selectAll().where('invitation_id', '=', invitation.id).executeTakeFirstOrThrow();
    expect(message).toMatchObject({ recipient: invitation.email, kind: 'invitation', language: 'fr', subject: 'Invitation au back office', sent_at: null });
    expect(message.body).toContain(adminName);
    expect(message.body).toContain('http://localhost:3000/#/invitation?token=boi_');

    const accepted = await accept(await tokenSentTo(invitation.email));
    expect(accepted.status, accepted.text).toBe(201);
    expect(accepted.headers['cache-control']).toContain('no-store');
    const me = await request(app).get('/me').set({ authorization: `Bearer ${accepted.body.access_token}` });
    expect(me.status, me.text).toBe(200);
    expect(me.body.user).toMatchObject({ email: invitation.email, first_name: 'Grace', last_name: 'Hopper', roles: [support.name] });
    // The invited roles' rights, and no more.
    expect((await request(app).get('/tasks').set({ authorization: `Bearer ${accepted.body.access_token}` })).status).toBe(200);
    expect((await request(app).get('/audit-events').set({ authorization: `Bearer ${accepted.body.access_token}` })).status).toBe(403);
    // Their own password: they sign in with it, and are not asked to change it.
    const again = await signIn(app, invitation.email, PASSWORD);
    expect((await request(app).get('/tasks').set({ authorization: `Bearer ${again.access_token}` })).status).toBe(200);

    const read = await send('get', `/invitations/${invitation.id.toUpperCase()}`, admin);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ status: 'accepted', user_id: me.body.user.id });
    expect(read.headers.etag).toBeDefined();

    const types = (await database.db.selectFrom('security_events').select('type').where('target_id', '=', invitation.id).orderBy('id').execute()).map((e) => e.type);
    expect(types).toEqual(['invitation_created', 'invitation_accepted']);
    const published = await database.db.selectFrom('events').select('type').where(sql<boolean>`payload->'data'->>'id' = ${me.body.user.id}`).execute();
    expect(published.map((e) => e.type)).toEqual(['user.created']);
  });

  it('GET /invitations pages newest first with a signed cursor', async () => {
    const made = [await invite(), await invite(), await invite()];
    const first = await send('get', '/invitations?limit=2', admin);
    expect(first.status).toBe(200);
    expect(first.body.data.map((i: { id: string }) => i.id)).toEqual([made[2]!.id, made[1]!.id]);
    const second = await send('get', `/invitations?limit=2&cursor=${first.body.next_cursor}`, admin);
    expect(second.body.data[0].id).toBe(made[0]!.id);
    const forged = await send('get', `/invitations?limit=2&cursor=${first.body.next_cursor}x`, admin);
    expect(forged.status).toBe(400);
  });

  it('expires_in_days is bounded (1 to 30)', async () => {
    expect((await send('post', '/invitations', admin, { email: address(), expires_in_days: 31 })).status).toBe(400);
    expect((await send('post', '/invitations', admin, { email: address(), expires_in_days: 0 })).status).toBe(400);
    const one = await invite({ expires_in_days: 1 });
    expect(Date.parse(one.expires_at) - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it('one live invitation per address (409 invitation_pending), also as typed in capitals', async () => {
    const first = await invite();
    const again = await send('post', '/invitations', admin, { email: first.email.toUpperCase() });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invitation_pending');
    // Once revoked, the address may be invited again.
    const etag = (await send('get', `/invitations/${first.id}`, admin)).headers.etag!;
    expect((await send('delete', `/invitations/${first.id}`, admin, undefined, { 'if-match': etag })).status).toBe(204);
    expect((await send('post', '/invitations', admin, { email: first.email })).status).toBe(201);
  });

  it('revoking with a stale If-Match is 412 and changes nothing; a revoked invitation is 409 on revoke and resend', async () => {
    const invitation = await invite();
    const stale = (await send('get', `/invitations/${invitation.id}`, admin)).headers.etag!;
    expect((await send('post', `/invitations/${invitation.id}/resend`, admin)).status).toBe(200);
    const refused = await send('delete', `/invitations/${invitation.id}`, admin, undefined, { 'if-match': stale });
    expect(refused.status).toBe(412);
    expect((await send('get', `/invitations/${invitation.id}`, admin)).body.status).toBe('pending');
    expect((await send('delete', `/invitations/${invitation.id}`, admin)).status).toBe(204);
    expect((await send('delete', `/invitations/${invitation.id}`, admin)).body.code).toBe('invitation_not_pending');
    expect((await send('post', `/invitations/${invitation.id}/resend`, admin)).body.code).toBe('invitation_not_pending');
  });

  it('an unknown, malformed or other resource\'s id is the same 404', async () => {
    for (const id of [randomUUID(), 'nope', support.id]) {
      const res = await send('get', `/invitations/${id}`, admin);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
  });

  it('an Idempotency-Key replays the invitation and sends one message', async () => {
    const email = address();
    const key = randomUUID();
    const first = await send('post', '/invitations', admin, { email }, { 'idempotency-key': key });
    const second = await send('post', '/invitations', admin, { email }, { 'idempotency-key': key });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect((await database.db.selectFrom('messages').select('id').where('recipient', '=', email).execute()).length).toBe(1);
  });

  it('a role requiring a second factor: the new session may only enrol (403 second_factor_required)', async () => {
    const strict = await makeRole(database.db, ['tasks.list'], `strict-${randomUUID().slice(0, 6)}`);
    await database.db.updateTable('roles').set({ requires_second_factor: true }).where('id', '=', strict.id).execute();
    const invitation = await invite({ roles: [strict.name] });
    const accepted = await accept(await tokenSentTo(invitation.email));
    expect(accepted.status).toBe(201);
    const res = await request(app).get('/tasks').set({ authorization: `Bearer ${accepted.body.access_token}` });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('second_factor_required');
  });

  it('a signed-in administrator needs a fresh step-up to invite', async () => {
    const person = await createUser(database.db, { permissions: ['invitations.manage', 'users.create'] });
    const tokens = await signIn(app, person.email, person.password);
    const res = await send('post', '/invitations', { authorization: `Bearer ${tokens.access_token}` }, { email: address() });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('step_up_required');
  });

  it('an API key with invitations.manage invites without a step-up', async () => {
    const key = await makeApiKey(database.db, ['invitations.manage', 'users.create']);
    const res = await send('post', '/invitations', { 'x-api-key': key.secret }, { email: address() });
    expect(res.status, res.text).toBe(201);
    expect(res.body.created_by.type).toBe('api_key');
  });

  it('a password the policy refuses is 400 and spends nothing', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    expect((await accept(token, { password: 'short' })).body.code).toBe('password_policy');
    expect((await accept(token)).status).toBe(201);
  });
});

describe('security: attacks on invitations', () => {
  it('a manager invites with a role above their own rights: 403, nothing written', async () => {
    const tables = (await tableNames(database.db)).filter((t) => !['sign_in_failures', 'rate_limit_counters', 'api_key_usage', 'security_events', 'step_up_refusals'].includes(t));
    const before = await digestTables(database.db, tables);
    const res = await send('post', '/invitations', admin, { email: address(), roles: [auditors.name] });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('permission_denied');
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('the permission alone: without invitations.manage, 403 on every operation', async () => {
    const key = await makeApiKey(database.db, ['tasks.list']);
    const invitation = await invite();
    expect((await send('get', '/invitations', { 'x-api-key': key.secret })).status).toBe(403);
    expect((await send('post', '/invitations', { 'x-api-key': key.secret }, { email: address() })).status).toBe(403);
    expect((await send('post', `/invitations/${invitation.id}/resend`, { 'x-api-key': key.secret })).status).toBe(403);
    expect((await send('delete', `/invitations/${invitation.id}`, { 'x-api-key': key.secret })).status).toBe(403);
  });

  it('a token used twice: the second is 400 invalid_invitation and makes no account', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    expect((await accept(token)).status).toBe(201);
    const again = await accept(token, { password: 'another long private sentence' });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_invitation');
    // The first password stands.
    await signIn(app, invitation.email, PASSWORD);
  });

  it('two racing acceptances of one token: one account', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    const answers = await Promise.all([accept(token), accept(token)]);
    expect(answers.map((a) => a.status).sort()).toEqual([201, 400]);
    expect((await database.db.selectFrom('users').select('id').where('email', '=', invitation.email).execute()).length).toBe(1);
  });

  it('an expired token is refused, and the invitation reads as expired', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    await database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', invitation.id).execute();
    expect((await accept(token)).body.code).toBe('invalid_invitation');
    expect((await send('get', `/invitations/${invitation.id}`, admin)).body.status).toBe('expired');
    // An expired invitation may be resent: a new link, valid again.
    expect((await send('post', `/invitations/${invitation.id}/resend`, admin)).body.status).toBe('pending');
    expect((await accept(await tokenSentTo(invitation.email))).status).toBe(201);
  });

  it('a revoked invitation\'s token is refused', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    expect((await send('delete', `/invitations/${invitation.id}`, admin)).status).toBe(204);
    expect((await accept(token)).body.code).toBe('invalid_invitation');
    expect(await database.db.selectFrom('users').select('id').where('email', '=', invitation.email).executeTakeFirst()).toBeUndefined();
  });

  it('a resent invitation\'s old token is dead, the new one works', async () => {
    const invitation = await invite();
    const old = await tokenSentTo(invitation.email);
    expect((await send('post', `/invitations/${invitation.id}/resend`, admin)).status).toBe(200);
    const fresh = await tokenSentTo(invitation.email);
    expect(fresh).not.toBe(old);
    expect((await accept(old)).body.code).toBe('invalid_invitation');
    expect((await accept(fresh)).status).toBe(201);
  });

  it('a guessed token (well-formed or not) is the same 400', async () => {
    const invitation = await invite();
    const real = await tokenSentTo(invitation.email);
    const body = real.split('_')[1]!;
    const flipped = `boi_${body.slice(0, -1)}${body.endsWith('a') ? 'b' : 'a'}_${real.split('_')[2]}`;
    for (const token of [flipped, 'boi_guess', 'boa_' + body + '_' + real.split('_')[2], real.toUpperCase()]) {
      const res = await accept(token);
      expect(res.status, token).toBe(400);
      expect(res.body.code).toBe('invalid_invitation');
    }
    expect((await send('get', `/invitations/${invitation.id}`, admin)).body.status).toBe('pending');
  });

  it('an invitation for an existing account\'s address is 409 email_taken, nothing written', async () => {
    const existing = await createUser(database.db);
    const before = (await database.db.selectFrom('messages').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n;
    const res = await send('post', '/invitations', admin, { email: existing.email.toUpperCase() });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('email_taken');
    expect((await database.db.selectFrom('messages').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow()).n).toBe(before);
  });

  it('a person who signs up another way before accepting: the token answers 409 email_taken, no second account', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    await createUser(database.db, { email: invitation.email });
    const res = await accept(token);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('email_taken');
  });

  it('attack: a holder of invitations.manage without users.create probes which addresses have accounts, or makes accounts', async () => {
    const existing = await createUser(database.db);
    const key = await makeApiKey(database.db, ['invitations.manage']);
    for (const email of [existing.email, address()]) {
      const res = await send('post', '/invitations', { 'x-api-key': key.secret }, { email });
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'permission_denied', missing_permissions: ['users.create'] });
    }
    expect(await database.db.selectFrom('invitations').select('id').where('created_by_api_key_id', '=', key.id).execute()).toEqual([]);
  });

  it('attack: a key with invitations.manage and the roles\' rights but not users.create revives an expired invitation, and an account is made from it', async () => {
    const invitation = await invite();
    const oldToken = await tokenSentTo(invitation.email);
    await database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', invitation.id).execute();
    const key = await makeApiKey(database.db, ['invitations.manage', 'tasks.list', 'tasks.read']);
    const before = await digestTables(database.db, ['invitations', 'messages']);
    // Refused as POST /invitations refuses it: the same problem, the same missing permission.
    const res = await send('post', `/invitations/${invitation.id}/resend`, { 'x-api-key': key.secret });
    expect(res.status, res.text).toBe(403);
    expect(res.body).toMatchObject({ code: 'permission_denied', missing_permissions: ['users.create'] });
    expect(changedTables(before, await digestTables(database.db, ['invitations', 'messages']))).toEqual([]);
    // No new link went out: the one in the outbox is still the expired one, and opens nothing.
    expect(await tokenSentTo(invitation.email)).toBe(oldToken);
    expect((await accept(oldToken)).body.code).toBe('invalid_invitation');
    expect(await countOf('users', 'email', invitation.email)).toBe(0);
  });

  it('attack: a key with invitations.manage but not users.create probes through resend whether an expired invitation\'s address now has an account', async () => {
    const key = await makeApiKey(database.db, ['invitations.manage', 'tasks.list', 'tasks.read']);
    const taken = await invite();
    const free = await invite();
    await database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', 'in', [taken.id, free.id]).execute();
    await createUser(database.db, { email: taken.email });
    // The same answer for both: the account's existence is not what decides it.
    for (const invitation of [taken, free]) {
      const res = await send('post', `/invitations/${invitation.id}/resend`, { 'x-api-key': key.secret });
      expect(res.status, res.text).toBe(403);
      expect(res.body).toMatchObject({ code: 'permission_denied', missing_permissions: ['users.create'] });
    }
    // Whoever may make accounts learns it, as POST /invitations and POST /users tell them.
    expect((await send('post', `/invitations/${taken.id}/resend`, admin)).body.code).toBe('email_taken');
  });

  it('attack: a manager demoted after inviting: the invitation is worth no more than its maker now', async () => {
    const manager = await createUser(database.db, { permissions: ['invitations.manage', 'users.create', 'tasks.list', 'tasks.read'] });
    const tokens = await signIn(app, manager.email, manager.password);
    await steppedUpInDatabase(database.db, manager.id);
    const invitation = await invite({}, { authorization: `Bearer ${tokens.access_token}` });
    const token = await tokenSentTo(invitation.email);
    // The manager loses the rights the invitation grants (their roles taken away), then the invitee accepts.
    await database.db.deleteFrom('user_roles').where('user_id', '=', manager.id).execute();
    const res = await accept(token);
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('invalid_invitation');
    expect(await database.db.selectFrom('users').select('id').where('email', '=', invitation.email).execute()).toEqual([]);
  });

  it('attack: an invitation for an address whose company signs people in (sso_required) hands out a password account', async () => {
    const domain = `sso-${randomUUID().slice(0, 6)}.example`;
    await requireSso(domain);
    const res = await send('post', '/invitations', admin, { email: `someone@${domain}` });
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('sso_required');
    expect(await database.db.selectFrom('invitations').select('id').where('email', '=', `someone@${domain}`).execute()).toEqual([]);
  });

  it('attack: an invitation made before its domain became sso_required is accepted, handing out a password account and a session', async () => {
    const domain = `sso-${randomUUID().slice(0, 6)}.example`;
    const invitation = await invite({ email: `someone@${domain}` });
    const token = await tokenSentTo(invitation.email);
    await requireSso(domain);
    const res = await accept(token);
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('sso_required');
    expect(res.body.access_token).toBeUndefined();
    // Nothing made: no account (so no session), and the invitation unspent.
    expect(await countOf('users', 'email', invitation.email)).toBe(0);
    expect((await send('get', `/invitations/${invitation.id}`, admin)).body).toMatchObject({ status: 'pending', user_id: null });
  });

  it('attack: resending an invitation whose domain became sso_required mails a new password link', async () => {
    const domain = `sso-${randomUUID().slice(0, 6)}.example`;
    const invitation = await invite({ email: `someone@${domain}` });
    await database.db.updateTable('invitations').set({ expires_at: new Date(Date.now() - 1000) }).where('id', '=', invitation.id).execute();
    const before = await digestTables(database.db, ['invitations', 'messages']);
    await requireSso(domain);
    const res = await send('post', `/invitations/${invitation.id}/resend`, admin);
    expect(res.status, res.text).toBe(403);
    expect(res.body.code).toBe('sso_required');
    expect(changedTables(before, await digestTables(database.db, ['invitations', 'messages']))).toEqual([]);
  });

  it('attack: a link spent, revoked or replaced is still readable in the outbox', async () => {
    const accepted = await invite();
    const acceptedToken = await tokenSentTo(accepted.email);
    expect((await accept(acceptedToken)).status).toBe(201);
    const revoked = await invite();
    await tokenSentTo(revoked.email);
    expect((await send('delete', `/invitations/${revoked.id}`, admin)).status).toBe(204);
    const resent = await invite();
    const oldToken = await tokenSentTo(resent.email);
    expect((await send('post', `/invitations/${resent.id}/resend`, admin)).status).toBe(200);
    const bodies = (await database.db.selectFrom('messages').select('body').where('recipient', 'in', [accepted.email, revoked.email, resent.email]).execute()).map((m) => m.body);
    // Only the new link of the resent invitation is left.
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).not.toContain(oldToken.split('_')[1]);
    expect(bodies[0]).not.toContain(acceptedToken.split('_')[1]);
  });

  it('the token appears in the message body and nowhere else: only its digest is stored', async () => {
    const invitation = await invite();
    const token = await tokenSentTo(invitation.email);
    const stored = await database.db.selectFrom('invitations').select('token_digest').where('id', '=', invitation.id).executeTakeFirstOrThrow();
    expect(stored.token_digest.equals(digestSecret(token))).toBe(true);
    const tokenBody = token.split('_')[1]!;
    // Every text of every table, but the message's body.
    const hits: string[] = [];
    for (const table of await tableNames(database.db)) {
      const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(table)} t`.execute(database.db);
      for (const { row } of rows) {
        if (row.includes(tokenBody)) hits.push(table);
      }
    }
    expect(hits).toEqual(['messages']);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from messages m where (m.recipient || m.kind || m.language || m.subject || coalesce(m.invitation_id::text, '')) like ${`%${tokenBody}%`}`.execute(database.db);
    expect(rows[0]!.n).toBe(0);
    // Nor in the answers.
    const listed = await send('get', '/invitations', admin);
    expect(JSON.stringify(listed.body)).not.toContain(tokenBody);
  });
});
