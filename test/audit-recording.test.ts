// Every mutating operation on keys, roles, users and sessions writes its audit event in the same
// transaction: actor (person and session, API key, or command line), target, request id, address,
// user agent, and for changes the fields before and after, never a secret. A refused operation,
// and one that changes nothing, write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { steppedUp } from './support/second-factor.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';

let database: TestDatabase;
let app: ReturnType<typeof createTestApp>['app'];
let admin: { id: string; email: string; password: string };
let adminToken: string;
let adminSession: string;
beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createTestApp(database.db, { clock: systemClock }));
  admin = await createUser(database.db, { roles: ['admin'] });
  adminToken = (await signIn(app, admin.email, admin.password)).access_token;
  // Creating and rotating keys are sensitive changes (docs/AUTH.md, "Step-up"); the tests run within the proof's 5 minutes.
  await steppedUp(app, adminToken, admin.password);
  adminSession = (await database.db.selectFrom('sessions').select('id').where('user_id', '=', admin.id).executeTakeFirstOrThrow()).id;
});
afterAll(() => database.destroy());

type Event = Record<string, unknown> & { changes: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } | null; details: Record<string, unknown> };

let requests = 0;
/**
 * A request as the admin, with a user agent and an X-Request-Id of its own choosing (which the
 * service ignores: src/http/request-context.ts); `requestId` is the id it was answered, once it is.
 */
function asAdmin(method: 'post' | 'patch' | 'delete' | 'put', path: string, body?: object) {
  requests += 1;
  const call = { requestId: '', res: request(app)[method](path) };
  call.res
    .set('authorization', `Bearer ${adminToken}`)
    .set('x-request-id', `audit-test-${requests}`)
    .set('user-agent', 'AuditTest/1.0')
    .expect((res) => {
      call.requestId = res.headers['x-request-id'] as string;
    });
  if (body) call.res.send(body);
  return call;
}

const events = async () => Number((await sql<{ n: string }>`select count(*) as n from security_events`.execute(database.db)).rows[0]!.n);

async function lastEvent(type: string): Promise<Event> {
  return (await database.db.selectFrom('security_events').selectAll().where('type', '=', type).orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow()) as unknown as Event;
}

/** The event of `type` written by the admin's request answered `requestId`. */
async function expectRecorded(type: string, requestId: string, target: { type: string; id: string; label?: string }) {
  expect(requestId).toMatch(/^[0-9a-f-]{36}$/); // the service's own, not the one sent
  const event = await lastEvent(type);
  expect(event).toMatchObject({
    actor_type: 'user',
    actor_id: admin.id,
    actor_session_id: adminSession,
    actor_label: expect.stringMatching(/^Test Person \d+$/),
    target_type: target.type,
    target_id: target.id,
    request_id: requestId,
    ip_address: expect.stringMatching(/127\.0\.0\.1$/),
    user_agent: 'AuditTest/1.0',
    ...(target.label ? { target_label: target.label } : {}),
  });
  return event;
}

describe('API keys', () => {
  it('create, update, rotate, revoke: each recorded with before and after; revoking again records nothing', async () => {
    const created = asAdmin('post', '/api-keys', { name: 'ci-deploy', permissions: ['users.list', 'users.read'], expires_at: '2099-01-01T00:00:00.000Z' });
    const { body } = await created.res.expect(201);
    const id = body.api_key.id as string;
    const createdEvent = await expectRecorded('api_key_created', created.requestId, { type: 'api_key', id, label: 'ci-deploy' });
    expect(createdEvent.changes).toEqual({ before: null, after: { name: 'ci-deploy', permissions: ['users.list', 'users.read'], expires_at: '2099-01-01T00:00:00.000Z' } });
    expect(createdEvent.user_id).toBe(admin.id);

    const updated = asAdmin('patch', `/api-keys/${id}`, { name: 'ci-deploy-2', permissions: ['users.list'] });
    await updated.res.expect(200);
    const updatedEvent = await expectRecorded('api_key_updated', updated.requestId, { type: 'api_key', id, label: 'ci-deploy-2' });
    expect(updatedEvent.changes).toEqual({ before: { name: 'ci-deploy', permissions: ['users.list', 'users.read'] }, after: { name: 'ci-deploy-2', permissions: ['users.list'] } });

    const rotated = asAdmin('post', `/api-keys/${id}/rotate`, { grace_period_seconds: 3600 });
    const rotation = await rotated.res.expect(200);
    const rotatedEvent = await expectRecorded('api_key_rotated', rotated.requestId, { type: 'api_key', id });
    expect(rotatedEvent.details).toEqual({ grace_period_seconds: 3600 });
    expect(rotatedEvent.changes).toEqual({
      before: { display_prefix: body.api_key.display_prefix, last_characters: body.api_key.last_characters },
      after: { display_prefix: rotation.body.api_key.display_prefix, last_characters: rotation.body.api_key.last_characters },
    });

    const revoked = asAdmin('delete', `/api-keys/${id}`);
    await revoked.res.expect(204);
    const revokedEvent = await expectRecorded('api_key_revoked', revoked.requestId, { type: 'api_key', id });
    expect(revokedEvent.changes).toEqual({ before: { revoked_at: null }, after: { revoked_at: expect.any(String) } });

    const count = await events();
    await asAdmin('delete', `/api-keys/${id}`).res.expect(204);
    expect(await events()).toBe(count);

    // Never the secret, nor its digest.
    const everything = JSON.stringify(await database.db.selectFrom('security_events').selectAll().execute());
    for (const secret of [body.secret as string, rotation.body.secret as string]) {
      expect(everything).not.toContain(secret);
      expect(everything).not.toContain(secret.slice(-12));
    }
  });

  it('rotating a key someone else created records that the rotator took it over', async () => {
    const key = await makeApiKey(database.db, ['users.list'], { name: 'operator-made' });
    const rotated = asAdmin('post', `/api-keys/${key.id}/rotate`, {});
    await rotated.res.expect(200);
    const event = await expectRecorded('api_key_rotated', rotated.requestId, { type: 'api_key', id: key.id, label: 'operator-made' });
    expect(event.details).toEqual({ grace_period_seconds: 0 });
    expect(event.changes).toMatchObject({ before: { created_by: null }, after: { created_by: admin.id } });
    expect(event.user_id).toBeNull(); // the key was nobody's: the operator made it
  });

  it('from the command line: the actor is the operating-system account, with no address or request', async () => {
    const keys = new ApiKeyService({ db: database.db, clock: systemClock });
    const draft = keys.draft(OPERATOR, { name: 'from-cli', permissions: ['users.list'] });
    const { key } = await database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
    expect(await lastEvent('api_key_created')).toMatchObject({ actor_type: 'cli', actor_id: null, actor_label: expect.any(String), target_id: key.id, request_id: null, ip_address: null, user_agent: null, user_id: null });
  });
});

describe('roles', () => {
  it('create, update, delete: each recorded with before and after', async () => {
    const created = asAdmin('post', '/roles', { name: 'auditors', description: 'Read the journal', permissions: ['audit.read'] });
    const { body } = await created.res.expect(201);
    expect((await expectRecorded('role_created', created.requestId, { type: 'role', id: body.id, label: 'auditors' })).changes).toEqual({
      before: null,
      after: { name: 'auditors', description: 'Read the journal', permissions: ['audit.read'], requires_second_factor: false },
    });
    const updated = asAdmin('patch', `/roles/${body.id}`, { permissions: ['audit.read', 'users.list'] });
    await updated.res.expect(200);
    expect((await expectRecorded('role_updated', updated.requestId, { type: 'role', id: body.id })).changes).toEqual({
      before: { permissions: ['audit.read'] },
      after: { permissions: ['audit.read', 'users.list'] },
    });
    const deleted = asAdmin('delete', `/roles/${body.id}`);
    await deleted.res.expect(204);
    expect((await expectRecorded('role_deleted', deleted.requestId, { type: 'role', id: body.id, label: 'auditors' })).changes).toEqual({
      before: { name: 'auditors', description: 'Read the journal', permissions: ['audit.read', 'users.list'], requires_second_factor: false },
      after: null,
    });
  });
});

describe('users and their sessions', () => {
  it('create, update, disable: each recorded with before and after, never the password; disabling records the revoked sessions', async () => {
    const password = 'a perfectly private passphrase';
    const created = asAdmin('post', '/users', { email: 'grace@audit.example', first_name: 'Grace', last_name: 'Hopper', roles: [], password });
    const { body } = await created.res.expect(201);
    const createdEvent = await expectRecorded('user_created', created.requestId, { type: 'user', id: body.id, label: 'Grace Hopper' });
    expect(createdEvent.changes).toEqual({ before: null, after: { email: 'grace@audit.example', first_name: 'Grace', last_name: 'Hopper', status: 'active', roles: [] } });
    expect(createdEvent.details).toEqual({ password_set: true });
    expect(createdEvent.user_id).toBe(body.id);

    const updated = asAdmin('patch', `/users/${body.id}`, { first_name: 'Grace B.', roles: ['admin'] });
    await updated.res.expect(200);
    expect((await expectRecorded('user_updated', updated.requestId, { type: 'user', id: body.id })).changes).toEqual({
      before: { first_name: 'Grace', roles: [] },
      after: { first_name: 'Grace B.', roles: ['admin'] },
    });

    await signIn(app, 'grace@audit.example', password);
    const graceSession = (await database.db.selectFrom('sessions').select('id').where('user_id', '=', body.id).executeTakeFirstOrThrow()).id;
    const disabled = asAdmin('delete', `/users/${body.id}`);
    await disabled.res.expect(200);
    expect((await expectRecorded('user_disabled', disabled.requestId, { type: 'user', id: body.id })).changes).toEqual({ before: { status: 'active' }, after: { status: 'disabled' } });
    const revoked = await expectRecorded('session_revoked', disabled.requestId, { type: 'session', id: graceSession });
    expect(revoked).toMatchObject({ user_id: body.id, details: { reason: 'user_disabled' } });

    const everything = JSON.stringify(await database.db.selectFrom('security_events').selectAll().execute());
    expect(everything).not.toContain(password);
    expect(everything).not.toContain('$argon2');
  });

  it("an administrator revoking someone's sessions is the recorded actor", async () => {
    const bob = await createUser(database.db);
    await signIn(app, bob.email, bob.password);
    const session = (await database.db.selectFrom('sessions').select('id').where('user_id', '=', bob.id).executeTakeFirstOrThrow()).id;
    const revoked = asAdmin('delete', `/users/${bob.id}/sessions`);
    await revoked.res.expect(204);
    expect(await expectRecorded('session_revoked', revoked.requestId, { type: 'session', id: session })).toMatchObject({ user_id: bob.id, details: { reason: 'revoked_by_administrator' } });
  });

  it('an API key creating a user is the recorded actor', async () => {
    const key = await makeApiKey(database.db, ['users.create'], { name: 'provisioning' });
    const res = await request(app).post('/users').set('x-api-key', key.secret).set('x-request-id', 'by-key').send({ email: 'by-key@audit.example', first_name: 'Key', last_name: 'Made' });
    expect(res.status).toBe(201);
    expect(res.headers['x-request-id']).not.toBe('by-key');
    expect(await lastEvent('user_created')).toMatchObject({ actor_type: 'api_key', actor_id: key.id, actor_label: 'provisioning', actor_session_id: null, request_id: res.headers['x-request-id'], target_id: res.body.id });
  });
});

describe('refused operations write nothing', () => {
  it('403, 404, 409 and 400 leave the journal as it was', async () => {
    const weak = await createUser(database.db, { permissions: ['roles.manage', 'api_keys.manage'] });
    const weakToken = (await signIn(app, weak.email, weak.password)).access_token;
    await asAdmin('post', '/roles', { name: 'taken', permissions: [] }).res.expect(201);
    const before = await events();
    const as = (token: string) => ({ authorization: `Bearer ${token}` });
    const refused = [
      await request(app).post('/roles').set(as(weakToken)).send({ name: 'escalate', permissions: ['users.create'] }),
      await request(app).post('/api-keys').set(as(weakToken)).send({ name: 'escalate', permissions: ['users.create'] }),
      await request(app).post('/roles').set(as(adminToken)).send({ name: 'taken', permissions: [] }),
      await request(app).patch('/roles/00000000-0000-4000-8000-000000000000').set(as(adminToken)).send({ name: 'ghost' }),
      await request(app).post('/users').set(as(adminToken)).send({ email: 'not-an-email', first_name: 'X', last_name: 'Y' }),
      await request(app).delete('/users/00000000-0000-4000-8000-000000000000').set(as(adminToken)),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 409, 404, 400, 404]);
    expect(await events()).toBe(before);
  });
});
