// The export of a person's data (GET /me/export, GET /users/{id}/export): complete, streamed page
// by page, in the caller's key style, recorded, without a secret, and without another person's
// data; and the attacks, named as the attacker would try them.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { authenticatorsWithTestBearer, createAppWithTestBearer, makeApiKey, makeIdentityProvider, makeMeeting, makePasskey, makeTask, testBearer } from './support/access-fixtures.js';
import { budget } from './support/budgets.js';
import { ManualClock } from '../src/clock.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import type { Authority } from '../src/auth/authority.js';
import { recordAuditEvent } from '../src/audit/recorder.js';
import { KeyInflector } from '../src/contract/inflection.js';
import { EXPORT_PAGE } from '../src/personal-data/service.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-15T10:00:00.000Z');
type App = Parameters<typeof request>[0];
const get = (app: App, path: string, authorization: string) => request(app).get(path).set('authorization', authorization);

/**
 * Ada, with something in every section, and Bob, who shares a meeting with her, was acted on by
 * her, and acted on her as an administrator: everything of Bob's is marked so the test can look
 * for it in Ada's document.
 */
async function ada() {
  const db = database.db;
  const clock = new ManualClock(START);
  const { app } = createTestApp(db, { clock });
  const tag = randomBytes(4).toString('hex');
  const person = await createUser(db, { permissions: ['tasks.list', 'meetings.list'], email: `ada-${tag}@example.com` });
  await db.updateTable('users').set({ first_name: 'Ada', last_name: `Lovelace${tag}`, language: 'fr' }).where('id', '=', person.id).execute();
  const bob = await createUser(db, { email: `bob-${tag}@elsewhere.example`, roles: ['admin'] });
  await db.updateTable('users').set({ first_name: 'Robert', last_name: `Secretname${tag}` }).where('id', '=', bob.id).execute();

  // Two sessions of Ada's (one of them over), and one of Bob's from an address of his own.
  const first = await signIn(app, person.email, person.password, `AdaBrowser/1 ${tag}`);
  const { secret: totpSecret, recoveryCodes } = await enrolTotp(app, first.access_token, clock, person.password);
  await request(app).delete('/sessions/current').set('authorization', `Bearer ${first.access_token}`);
  const bobSet = await signIn(app, bob.email, bob.password, `BobBrowser/9 ${tag}`);
  await db.updateTable('sessions').set({ ip_address: '203.0.113.77' }).where('user_id', '=', bob.id).execute();
  await db.updateTable('sessions').set({ ip_address: '192.0.2.10' }).where('user_id', '=', person.id).execute();
  const passkeyId = await makePasskey(db, person.id);
  // Their accounts at a company's identity provider, and the ids a directory gave them.
  const provider = await makeIdentityProvider(db, `https://idp-${tag}.example`);
  for (const [userId, subject] of [[person.id, `ada-sub-${tag}`], [bob.id, `bob-sub-${tag}`]] as const) {
    await db.insertInto('identity_links').values({ issuer: `https://idp-${tag}.example`, subject, user_id: userId, provider_id: provider, created_at: START, last_sign_in_at: START }).execute();
    await db.insertInto('scim_external_ids').values({ user_id: userId, external_id: subject.replace('-sub-', '-dir-'), updated_at: START }).execute();
  }

  // Bob, an administrator, changed Ada's account from his address; Ada renamed Bob (names in the changes).
  await recordAuditEvent(db, {
    type: 'user_updated',
    at: START,
    context: { actor: { type: 'user', userId: bob.id, sessionId: (await db.selectFrom('sessions').select('id').where('user_id', '=', bob.id).executeTakeFirstOrThrow()).id }, requestId: null, ip: '203.0.113.77', userAgent: `BobBrowser/9 ${tag}` },
    target: { type: 'user', id: person.id },
    userId: person.id,
    changes: { before: { roles: [] }, after: { roles: ['support'] } },
  });
  await recordAuditEvent(db, {
    type: 'user_updated',
    at: START,
    context: { actor: { type: 'user', userId: person.id, sessionId: null as unknown as string }, requestId: null, ip: '192.0.2.10', userAgent: `AdaBrowser/1 ${tag}` },
    target: { type: 'user', id: bob.id },
    userId: bob.id,
    changes: { before: { last_name: `Secretname${tag}` }, after: { last_name: `Secretname${tag}` } },
  });

  // Invitations: the one that made Ada's account, and one she sent to someone else.
  const invitation = (email: string, values: Record<string, unknown>) =>
    db.insertInto('invitations').values({ email, email_key: email, token_digest: randomBytes(32), expires_in_days: 7, expires_at: new Date(START.getTime() + 7 * 86_400_000), ...values }).returning('id').executeTakeFirstOrThrow();
  const received = await invitation(person.email, { status: 'accepted', user_id: person.id, accepted_at: START, created_by_user_id: bob.id });
  const sent = await invitation(`carol-${tag}@elsewhere.example`, { created_by_user_id: person.id });

  // A key of Ada's, one of Bob's; tasks and meetings of both.
  const keys = new ApiKeyService({ db, clock });
  const keyOf = (userId: string, name: string) => {
    const by: Authority = { kind: 'user', userId, sessionId: '00000000-0000-4000-8000-00000000e55e', permissions: new Set(['tasks.list']) };
    const draft = keys.draft(by, { name, permissions: ['tasks.list'] });
    return db.transaction().execute((trx) => keys.create(trx, by, draft));
  };
  const adaKey = await keyOf(person.id, `ada key ${tag}`);
  const bobKey = await keyOf(bob.id, `bob key ${tag}`);
  const assigned = await makeTask(db, { assigneeId: person.id });
  const created = await db.insertInto('tasks').values({ title: `ada's own ${tag}`, created_by_user_id: person.id, assignee_id: bob.id }).returning('id').executeTakeFirstOrThrow();
  const bobsTask = await makeTask(db, { assigneeId: bob.id, title: `bob's task ${tag}` });
  const organised = await makeMeeting(db, { organizerId: person.id });
  const attended = await makeMeeting(db, { organizerId: bob.id });
  await db.insertInto('meeting_attendees').values({ meeting_id: attended.id, user_id: person.id, starts_at: new Date('2026-12-15T09:00:00Z'), ends_at: new Date('2026-12-15T10:00:00Z') }).execute();
  const bobsMeeting = await makeMeeting(db, { organizerId: bob.id, startsAt: new Date('2026-12-16T09:00:00Z') });
  const set = await signIn(app, person.email, person.password, `AdaBrowser/2 ${tag}`).catch(() => undefined);
  return { app, clock, tag, person, bob, bobSet, first, set, totpSecret, recoveryCodes, passkeyId, received, sent, adaKey, bobKey, assigned, created, bobsTask, organised, attended, bobsMeeting };
}

const ids = (rows: { id: unknown }[]) => rows.map((r) => r.id).sort();

describe('GET /users/{id}/export', { timeout: budget({ passwordHash: 10 }) }, () => {
  it("an administrator exports a person: every section with the person's rows, and nothing of anyone else's", async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const res = await get(app, `/users/${f.person.id}/export`, testBearer(f.bob.id));
    expect(res.status, res.text).toBe(200);
    expectContractResponse(res, 'GET', `/users/${f.person.id}/export`);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="personal-data-${f.person.id}-2026-12-15.json"`);
    expect(res.headers['cache-control']).toContain('no-store');
    const doc = res.body;
    expect(doc.format).toBe('backoffice.personal-data.v1');
    expect(doc.user).toMatchObject({ id: f.person.id, email: f.person.email, first_name: 'Ada', last_name: `Lovelace${f.tag}` });
    expect(doc.roles).toHaveLength(1);
    expect(doc.roles[0].permissions.sort()).toEqual(['meetings.list', 'tasks.list']);
    expect(doc.sessions).toHaveLength(1);
    expect(doc.sessions[0]).toMatchObject({ ip_address: '192.0.2.10', user_agent: `AdaBrowser/1 ${f.tag}` });
    expect(doc.sessions[0].ended_at).not.toBeNull();
    // The browser of her sign-in, remembered for the new-device notice: counted, never shown (its digest is a secret).
    expect(doc.known_devices).toBe(1);
    // The language she chose for her messages.
    expect(doc.language).toBe('fr');
    expect(doc.second_factors.map((s: { kind: string }) => s.kind).sort()).toEqual(['passkey', 'totp']);
    expect(doc.identity_links).toEqual([expect.objectContaining({ issuer: `https://idp-${f.tag}.example`, subject: `ada-sub-${f.tag}` })]);
    expect(doc.scim_external_id).toBe(`ada-dir-${f.tag}`);
    expect(doc.invitations_received.map((i: { id: string }) => i.id)).toEqual([f.received.id]);
    expect(doc.invitations_sent.map((i: { id: string }) => i.id)).toEqual([f.sent.id]);
    expect(doc.api_keys.map((k: { id: string }) => k.id)).toEqual([f.adaKey.key.id]);
    expect(doc.tasks).toEqual(
      expect.arrayContaining([
        { id: f.assigned.id, title: expect.any(String), relations: ['assignee'] },
        { id: f.created.id, title: `ada's own ${f.tag}`, relations: ['creator'] },
      ]),
    );
    expect(doc.tasks).toHaveLength(2);
    expect(ids(doc.meetings)).toEqual([f.organised.id, f.attended.id].sort());
    expect(doc.meetings.find((m: { id: string }) => m.id === f.organised.id).relations).toEqual(['organizer', 'attendee']);
    expect(doc.meetings.find((m: { id: string }) => m.id === f.attended.id).relations).toEqual(['attendee']);

    // Her audit trail: her sign-ins, her enrolment, what Bob did to her, what she did to Bob, this export.
    const types = doc.audit_events.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['sign_in_succeeded', 'second_factor_enrolled', 'user_updated', 'user_exported']));
    for (const e of doc.audit_events) expect(e.user_id === f.person.id || e.actor.id === f.person.id).toBe(true);
    // Bob acting on her: the fact and his id, without his name, address, user agent or session.
    const byBob = doc.audit_events.find((e: { actor: { id: string }; type: string }) => e.type === 'user_updated' && e.actor.id === f.bob.id);
    expect(byBob).toMatchObject({ ip_address: null, user_agent: null, actor: { type: 'user', id: f.bob.id, label: null, session_id: null }, user_id: f.person.id, changes: { after: { roles: ['support'] } } });
    // She acting on Bob: the fact and his id, not his name nor the values changed.
    const onBob = doc.audit_events.find((e: { target: { id: string } | null }) => e.target?.id === f.bob.id);
    expect(onBob).toMatchObject({ user_id: null, changes: null, details: {}, target: { type: 'user', id: f.bob.id, label: null } });

    // Nothing of Bob's anywhere: e-mail, name, address, user agent, key, task, meeting, invitee.
    const text = res.text;
    for (const his of [f.bob.email, `Secretname${f.tag}`, '203.0.113.77', `BobBrowser/9`, `bob key ${f.tag}`, f.bobKey.key.id, f.bobsTask.id, f.bobsMeeting.id, `carol-${f.tag}`, `bob-sub-${f.tag}`, `bob-dir-${f.tag}`]) {
      expect(text, his).not.toContain(his);
    }
  });

  it('no secret is in the document: password hash, token digests, the authenticator key, recovery codes, key secrets, passkey keys, known devices\' digests', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const res = await get(app, `/users/${f.person.id}/export`, testBearer(f.bob.id));
    expect(res.status).toBe(200);
    const user = await database.db.selectFrom('users').select(['password_hash', 'known_devices']).where('id', '=', f.person.id).executeTakeFirstOrThrow();
    expect(user.known_devices).toHaveLength(1);
    const tokens = await database.db.selectFrom('session_tokens').innerJoin('sessions', 'sessions.id', 'session_tokens.session_id').select(['access_digest', 'refresh_digest']).where('sessions.user_id', '=', f.person.id).execute();
    const factors = await database.db.selectFrom('second_factors').select(['totp_secret_sealed', 'public_key', 'credential_id']).where('user_id', '=', f.person.id).execute();
    const secrets = [
      user.password_hash!,
      f.person.password,
      f.first.access_token,
      f.first.refresh_token,
      f.totpSecret,
      ...f.recoveryCodes,
      f.adaKey.secret,
      ...tokens.flatMap((t) => [t.access_digest.toString('hex'), t.access_digest.toString('base64'), t.refresh_digest.toString('hex'), t.refresh_digest.toString('base64')]),
      ...factors.flatMap((s) => [s.totp_secret_sealed?.toString('base64'), s.public_key?.toString('base64'), s.credential_id].filter((v): v is string => !!v)),
      ...user.known_devices!.flatMap((d) => [d.toString('hex'), d.toString('base64')]),
    ];
    for (const secret of secrets) expect(res.text).not.toContain(secret);
    // No member named after a secret either (`password_set`, a fact about one, is not one).
    expect(res.text).not.toMatch(/"(password|password_hash|[a-z_]*digest|[a-z_]*secret[a-z_]*|public_key|credential_id|token[a-z_]*)":/i);
  });

  it('is streamed: a long history comes whole, in order, once each, over several pages', async () => {
    const person = await createUser(database.db);
    const count = EXPORT_PAGE * 2 + 37;
    await sql`
      insert into security_events (type, occurred_at, user_id, actor_type, actor_id, details)
      select 'tokens_refreshed', ${START}::timestamptz - (n || ' seconds')::interval * (n % 3), ${person.id}, 'user', ${person.id}, '{}'
      from generate_series(1, ${count}) n`.execute(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    const res = await get(app, `/users/${person.id}/export`, testBearer(admin.id));
    expect(res.status).toBe(200);
    expect(res.headers['transfer-encoding']).toBe('chunked');
    const events = res.body.audit_events as { id: number; occurred_at: string; type: string }[];
    // Every event once (plus user_created and this export), oldest first.
    expect(events.filter((e) => e.type === 'tokens_refreshed')).toHaveLength(count);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
    const order = events.map((e) => [e.occurred_at, e.id] as const);
    expect(order).toEqual([...order].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1])));
  });

  it('answers in the key style of x-api-inflection, every section, the streamed lists included', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const snake = (await get(app, `/users/${f.person.id}/export`, testBearer(f.bob.id))).body;
    const inflector = new KeyInflector(spec);
    const schema = { $ref: '#/components/schemas/PersonalDataExport' };
    for (const style of ['camel', 'dash', 'pascal'] as const) {
      const res = await get(app, `/users/${f.person.id}/export`, testBearer(f.bob.id)).set('x-api-inflection', style);
      expect(res.status).toBe(200);
      const styled = inflector.toStyle(snake, schema, style) as Record<string, unknown>;
      const events = { camel: 'auditEvents', dash: 'audit-events', pascal: 'AuditEvents' }[style];
      // Each export records one more event: compare the earlier ones.
      const body = { ...res.body, [events]: (res.body[events] as unknown[]).slice(0, (styled[events] as unknown[]).length) };
      expect(body).toEqual(styled);
      expect(Object.keys(res.body)).toContain({ camel: 'invitationsReceived', dash: 'invitations-received', pascal: 'InvitationsReceived' }[style]);
    }
  });

  it('is recorded as user_exported, with the caller as actor and the person as subject', async () => {
    const person = await createUser(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    expect((await get(app, `/users/${person.id}/export`, testBearer(admin.id))).status).toBe(200);
    const events = await database.db.selectFrom('security_events').selectAll().where('type', '=', 'user_exported').where('user_id', '=', person.id).execute();
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ actor_type: 'user', actor_id: admin.id, target_type: 'user', target_id: person.id });
  });

  it('the French path exports as well, and an id in capitals finds the person', async () => {
    const person = await createUser(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    const res = await get(app, `/utilisateurs/${person.id.toUpperCase()}/exportation`, testBearer(admin.id));
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(person.id);
  });
});

describe('GET /me/export', { timeout: budget({ passwordHash: 8 }) }, () => {
  it('a signed-in person downloads their own data after a fresh proof', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db);
    const set = await signIn(app, person.email, person.password);
    const refused = await get(app, '/me/export', `Bearer ${set.access_token}`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('step_up_required');
    expectContractResponse(refused, 'GET', '/me/export');
    await database.db.updateTable('sessions').set({ stepped_up_at: START, step_up_method: 'password' }).where('user_id', '=', person.id).execute();
    const res = await get(app, '/me/export', `Bearer ${set.access_token}`);
    expect(res.status, res.text).toBe(200);
    expectContractResponse(res, 'GET', '/me/export');
    expect(res.body.user.id).toBe(person.id);
    expect(res.body.sessions).toHaveLength(1);
    expect((await get(app, '/moi/exportation', `Bearer ${set.access_token}`)).body.user.id).toBe(person.id);
  });
});

describe('security: exporting personal data', { timeout: budget({ passwordHash: 6 }) }, () => {
  it('a support agent holding users.export asks for an administrator\'s data: 404, as for an unknown id, and nothing is written', async () => {
    const admin = await createUser(database.db, { roles: ['admin'] });
    const agent = await createUser(database.db, { permissions: ['users.export', 'users.list'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await get(app, `/users/${admin.id}/export`, testBearer(agent.id));
    expect(res.status).toBe(404);
    expectContractResponse(res, 'GET', `/users/${admin.id}/export`);
    const unknown = await get(app, '/users/00000000-0000-4000-8000-0000000000ff/export', testBearer(agent.id));
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toBe(res.body.detail);
    // A malformed id is refused by the contract's format before any lookup, as on every /users/{id}.
    expect((await get(app, '/users/not-a-user/export', testBearer(agent.id))).status).toBe(400);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    // A person holding no more than the agent is exportable.
    const colleague = await createUser(database.db, { permissions: ['users.list'] });
    expect((await get(app, `/users/${colleague.id}/export`, testBearer(agent.id))).status).toBe(200);
  });

  it('a person without users.export asks for a colleague\'s data: 403 naming the permission, before any lookup', async () => {
    const colleague = await createUser(database.db);
    const nosy = await createUser(database.db, { permissions: ['users.list', 'users.read', 'audit.read'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    for (const id of [colleague.id, '00000000-0000-4000-8000-0000000000ff']) {
      const res = await get(app, `/users/${id}/export`, testBearer(nosy.id));
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ code: 'permission_denied', required_permission: 'users.export' });
    }
  });

  it('an API key holding users.export exports only people whose rights it holds, and cannot call /me/export', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(START) });
    const key = await makeApiKey(database.db, ['users.export', 'tasks.list']);
    const plain = await createUser(database.db, { permissions: ['tasks.list'] });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const ok = await request(app).get(`/users/${plain.id}/export`).set('x-api-key', key.secret);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.user.id).toBe(plain.id);
    const recorded = await database.db.selectFrom('security_events').selectAll().where('type', '=', 'user_exported').where('user_id', '=', plain.id).executeTakeFirstOrThrow();
    expect(recorded).toMatchObject({ actor_type: 'api_key', actor_id: key.id });
    expect((await request(app).get(`/users/${admin.id}/export`).set('x-api-key', key.secret)).status).toBe(404);
    const me = await request(app).get('/me/export').set('x-api-key', key.secret);
    expect(me.status).toBe(401);
    const without = await makeApiKey(database.db, ['users.list', 'users.read']);
    expect((await request(app).get(`/users/${plain.id}/export`).set('x-api-key', without.secret)).status).toBe(403);
  });

  it('a stolen access token without a fresh proof cannot export anyone: 403 step_up_required', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const person = await createUser(database.db);
    const set = await signIn(app, admin.email, admin.password);
    const res = await get(app, `/users/${person.id}/export`, `Bearer ${set.access_token}`);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('step_up_required');
  });

  it('a person asks /me/export with a colleague\'s id in the query or path: still only their own data', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const mine = await get(app, `/me/export`, testBearer(f.person.id));
    expect(mine.status).toBe(200);
    expect(mine.body.user.id).toBe(f.person.id);
    const smuggled = await get(app, `/me/export?user_id=${f.bob.id}`, testBearer(f.person.id));
    expect(smuggled.status).toBe(400);
    for (const his of [f.bob.email, `Secretname${f.tag}`, '203.0.113.77', 'BobBrowser/9']) expect(mine.text).not.toContain(his);
    // Ada lacks users.export: Bob's data is not hers to take through the administrators' path.
    expect((await get(app, `/users/${f.bob.id}/export`, testBearer(f.person.id))).status).toBe(403);
  });
});

describe('security: HEAD of an export', { timeout: budget({ passwordHash: 1 }) }, () => {
  it('a client sends HEAD /users/{id}/export in a loop: the headers of the GET, no body, and not one page of the walk read', async () => {
    const statements: string[] = [];
    const db = database.db.withPlugin({
      transformQuery: (args) => {
        statements.push(JSON.stringify(args.node));
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const person = await createUser(database.db);
    const { app } = createAppWithTestBearer(db, new ManualClock(START));
    const readsWalk = () => statements.some((text) => text.includes('"name":"meeting_attendees"'));
    const head = await request(app).head(`/users/${person.id}/export`).set('authorization', testBearer(admin.id));
    expect(head.status).toBe(200);
    expect(head.headers['content-disposition']).toBe(`attachment; filename="personal-data-${person.id}-${START.toISOString().slice(0, 10)}.json"`);
    expect(head.headers['cache-control']).toBe('no-store');
    expect(head.text ?? '').toBe('');
    expect(readsWalk()).toBe(false);
    // The GET does walk (the detection above sees it).
    expect((await get(app, `/users/${person.id}/export`, testBearer(admin.id))).status).toBe(200);
    expect(readsWalk()).toBe(true);
  });
});

describe('security: another person in the export through the journal', { timeout: budget({ passwordHash: 2 }) }, () => {
  it('a person exports themselves after inviting someone: the invitee\'s address, the label of the invitation_created event, is not in the document', async () => {
    const inviter = await createUser(database.db, { permissions: ['invitations.create'] });
    const { app } = createAppWithTestBearer(database.db, new ManualClock(START));
    const invitee = `dora-${randomBytes(4).toString('hex')}@elsewhere.example`;
    const invitation = await database.db
      .insertInto('invitations')
      .values({ email: invitee, email_key: invitee, token_digest: randomBytes(32), expires_in_days: 7, expires_at: new Date(START.getTime() + 7 * 86_400_000), created_by_user_id: inviter.id })
      .returning('id')
      .executeTakeFirstOrThrow();
    // As src/invitations/service.ts records it: the invitation labelled with the address, no person concerned yet.
    await recordAuditEvent(database.db, {
      type: 'invitation_created',
      at: START,
      context: { actor: { type: 'user', userId: inviter.id, sessionId: null as unknown as string }, requestId: null, ip: '192.0.2.10', userAgent: null },
      target: { type: 'invitation', id: invitation.id, label: invitee },
      changes: { before: null, after: { email: invitee } },
    });
    const res = await get(app, '/me/export', testBearer(inviter.id));
    expect(res.status, res.text).toBe(200);
    const event = (res.body.audit_events as { type: string; target: { id: string } | null }[]).find((e) => e.type === 'invitation_created');
    expect(event?.target?.id).toBe(invitation.id);
    expect(res.text).not.toContain(invitee);
  });
});

describe('security: exporting in a loop', { timeout: budget({ passwordHash: 2 }) }, () => {
  it('a person scripting exports is held to USER_RATE_LIMIT, on both paths', async () => {
    const clock = new ManualClock(START);
    const { deps } = createTestApp(database.db, { clock });
    const { app } = createTestApp(database.db, { clock, env: { USER_RATE_LIMIT: '2/60' }, authenticators: authenticatorsWithTestBearer(deps) });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const person = await createUser(database.db);
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await get(app, `/users/${person.id}/export`, testBearer(admin.id))).status);
    expect(statuses).toEqual([200, 200, 429]);
    expect((await get(app, '/me/export', testBearer(admin.id))).status).toBe(429);
  });
});

describe('security: linked resources in another person\'s export', { timeout: budget({ passwordHash: 10 }) }, () => {
  const LINKED = ['api_keys', 'audit_events', 'invitations_received', 'invitations_sent', 'meetings', 'roles', 'sessions', 'tasks'];

  it('an exporter holding users.export but neither tasks.read nor meetings.read exports a colleague to read the ids and titles of their tasks and meetings: both lists empty, and the document says they were withheld and which permission reads them', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    // Holds every permission Ada holds (else 404), and users.export; not tasks.read nor meetings.read.
    const exporter = await createUser(database.db, { permissions: ['users.export', 'tasks.list', 'meetings.list'] });
    expect((await get(app, `/tasks/${f.assigned.id}`, testBearer(exporter.id))).status).toBe(403);
    expect((await get(app, `/meetings/${f.organised.id}`, testBearer(exporter.id))).status).toBe(403);
    const res = await get(app, `/users/${f.person.id}/export`, testBearer(exporter.id));
    expect(res.status, res.text).toBe(200);
    for (const id of [f.assigned.id, f.created.id, f.organised.id, f.attended.id, `ada's own ${f.tag}`]) expect(res.text, id).not.toContain(id);
    expect({ tasks: res.body.tasks, meetings: res.body.meetings }).toEqual({ tasks: [], meetings: [] });
    expectContractResponse(res, 'GET', `/users/${f.person.id}/export`);
    expect(res.body.withheld_sections).toEqual(
      expect.arrayContaining([
        { section: 'tasks', required_permission: 'tasks.read', reason: 'permission_missing' },
        { section: 'meetings', required_permission: 'meetings.read', reason: 'permission_missing' },
      ]),
    );
  });

  it('an exporter holding only users.export (and the person\'s rights) reads none of the linked resources through the export: keys, sessions, journal, invitations, roles, tasks, meetings are empty and each named as withheld', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const exporter = await createUser(database.db, { permissions: ['users.export', 'tasks.list', 'meetings.list'] });
    const res = await get(app, `/users/${f.person.id}/export`, testBearer(exporter.id));
    expect(res.status, res.text).toBe(200);
    const doc = res.body;
    for (const section of LINKED) expect(doc[section], section).toEqual([]);
    for (const leaked of [f.adaKey.key.id, `ada key ${f.tag}`, '192.0.2.10', 'AdaBrowser', f.received.id, f.sent.id, f.bob.id]) expect(res.text, leaked).not.toContain(leaked);
    expectContractResponse(res, 'GET', `/users/${f.person.id}/export`);
    expect(doc.withheld_sections).toEqual([
      { section: 'roles', required_permission: 'roles.manage', reason: 'permission_missing' },
      { section: 'sessions', required_permission: 'sessions.manage', reason: 'permission_missing' },
      { section: 'audit_events', required_permission: 'audit.read', reason: 'permission_missing' },
      { section: 'invitations_received', required_permission: 'invitations.manage', reason: 'permission_missing' },
      { section: 'invitations_sent', required_permission: 'invitations.manage', reason: 'permission_missing' },
      { section: 'api_keys', required_permission: 'api_keys.manage', reason: 'permission_missing' },
      { section: 'tasks', required_permission: 'tasks.read', reason: 'permission_missing' },
      { section: 'meetings', required_permission: 'meetings.read', reason: 'permission_missing' },
    ]);
    // The person's own account is what users.export hands out: profile, language, devices, second factors, identities.
    expect(doc.user.id).toBe(f.person.id);
    expect(doc.language).toBe('fr');
    expect(doc.second_factors).toHaveLength(2);
    expect(doc.identity_links).toHaveLength(1);
    expect(doc.scim_external_id).toBe(`ada-dir-${f.tag}`);
  });

  it('an exporter holding tasks.read but not meetings.read gets the tasks, not the meetings; an administrator gets every section and nothing withheld', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const exporter = await createUser(database.db, { permissions: ['users.export', 'tasks.list', 'meetings.list', 'tasks.read', 'audit.read'] });
    const res = await get(app, `/users/${f.person.id}/export`, testBearer(exporter.id));
    expect(res.status, res.text).toBe(200);
    expect(ids(res.body.tasks)).toEqual([f.assigned.id, f.created.id].sort());
    expect(res.body.meetings).toEqual([]);
    expect(res.body.audit_events.length).toBeGreaterThan(0);
    expect(res.body.withheld_sections.map((w: { section: string }) => w.section)).not.toContain('tasks');
    expect(res.body.withheld_sections.map((w: { section: string }) => w.section)).toContain('meetings');
    const all = await get(app, `/users/${f.person.id}/export`, testBearer(f.bob.id));
    expect(all.body.withheld_sections).toEqual([]);
    expect(ids(all.body.meetings)).toEqual([f.organised.id, f.attended.id].sort());
  });

  it('an API key holding sessions.manage and api_keys.manage exports a person to read their sessions and keys, which the API shows only to signed-in people: withheld, as signed_in_only', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const key = await makeApiKey(database.db, ['users.export', 'tasks.list', 'meetings.list', 'sessions.manage', 'api_keys.manage', 'tasks.read']);
    expect((await request(app).get(`/users/${f.person.id}/sessions`).set('x-api-key', key.secret)).status).toBe(401);
    const res = await request(app).get(`/users/${f.person.id}/export`).set('x-api-key', key.secret);
    expect(res.status, res.text).toBe(200);
    expect({ sessions: res.body.sessions, api_keys: res.body.api_keys }).toEqual({ sessions: [], api_keys: [] });
    expect(res.text).not.toContain(f.adaKey.key.id);
    expect(res.body.withheld_sections).toEqual(
      expect.arrayContaining([
        { section: 'sessions', required_permission: 'sessions.manage', reason: 'signed_in_only' },
        { section: 'api_keys', required_permission: 'api_keys.manage', reason: 'signed_in_only' },
      ]),
    );
    expect(ids(res.body.tasks)).toEqual([f.assigned.id, f.created.id].sort());
  });

  it('a person holding no permission to read tasks or meetings exports themselves: their own tasks and meetings are theirs by relation, and nothing is withheld', async () => {
    const f = await ada();
    const { app } = createAppWithTestBearer(database.db, f.clock);
    const res = await get(app, '/me/export', testBearer(f.person.id));
    expect(res.status, res.text).toBe(200);
    expectContractResponse(res, 'GET', '/me/export');
    expect(res.body.withheld_sections).toEqual([]);
    expect(ids(res.body.tasks)).toEqual([f.assigned.id, f.created.id].sort());
    expect(ids(res.body.meetings)).toEqual([f.organised.id, f.attended.id].sort());
    expect(ids(res.body.api_keys)).toEqual([f.adaKey.key.id]);
    expect(res.body.sessions.length).toBeGreaterThan(0);
  });
});
