// Erasing a person (POST /users/{id}/erasure, docs/ERASURE.md): afterwards nothing in any table,
// the event feed or a stored payload names them, what they did stays as done by an erased person,
// and the sealed audit trail still verifies and still names any other edit. Attacks as an
// attacker would try them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn, refresh } from './support/sessions.js';
import { aPersonWithALife, findTraces, PERSON, TRACES } from './support/erasure.js';
import { expectContractResponse } from './support/contract.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { adminRoleId } from './support/access-fixtures.js';
import { makeApiKey, makeRole } from './support/access-fixtures.js';
import { sealAuditEvents } from '../src/audit/seal.js';
import { verifyAuditTrail } from '../src/audit/verify.js';
import { OPERATOR } from '../src/auth/authority.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { ManualClock } from '../src/clock.js';
import { budget } from './support/budgets.js';
import { runCli } from './support/cli.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildService } from '../src/main.js';
import { loadConfig } from '../src/config.js';
import { captureLogs } from './support/context.js';

const verify = (db: Kysely<Database>, now: Date) => verifyAuditTrail(db, { now, retentionS: 400 * 86_400 });

/** The whole erasure, as the issue asks it: on any database (PostgreSQL and the embedded one). */
export async function erasureLeavesNothing(db: Kysely<Database>) {
  const life = await aPersonWithALife(db);
  const { app, person, eraser, clock } = life;
  expect(await findTraces(db, TRACES)).not.toEqual([]);
  const devices = () => db.selectFrom('users').select(['known_devices', 'known_devices_key_id', 'language']).where('id', '=', person.id).executeTakeFirstOrThrow();
  expect(await devices()).toMatchObject({ known_devices: [expect.any(Buffer)], language: 'fr' });

  const res = await request(app).post(`/users/${person.id}/erasure`).set(eraser.headers);
  expect(res.status, res.text).toBe(200);
  expectContractResponse(res, 'POST', `/users/${person.id}/erasure`);
  expect(res.body).toMatchObject({ id: person.id, first_name: '', last_name: '', status: 'disabled', roles: [], email: `erased-${person.id}@erased.invalid` });
  expect(res.body.erased_at).toEqual(expect.any(String));

  // Nothing left: in any column of any table, whatever the stored event, payload or delivery.
  expect(await findTraces(db, TRACES)).toEqual([]);
  // The feed holds an event back while an older transaction runs anywhere in the cluster (the other
  // test files' databases share it): asked until the erasure's event is there, each answer checked.
  const told = async () => {
    const feed = await request(app).get('/events?limit=100').set(eraser.headers);
    expect(feed.status, feed.text).toBe(200);
    for (const trace of TRACES) expect(feed.text.toLowerCase()).not.toContain(trace.toLowerCase());
    return feed.body.data.filter((e: { type: string; data: { id: string } }) => e.type === 'user.erased' && e.data.id === person.id).map((e: { data: unknown }) => e.data);
  };
  await expect.poll(told, { timeout: 30_000 }).toEqual([{ id: person.id }]);

  // What they did stays, as done by an erased person.
  expect(await db.selectFrom('tasks').select('id').where('id', 'in', life.tasks).execute()).toHaveLength(2);
  expect(await db.selectFrom('meeting_attendees').select('meeting_id').where('user_id', '=', person.id).execute()).toHaveLength(2);
  expect((await db.selectFrom('api_keys').select('revoked_at').where('id', '=', life.keyId).executeTakeFirstOrThrow()).revoked_at).not.toBeNull();
  for (const table of ['sessions', 'second_factors', 'recovery_codes', 'user_roles'] as const) {
    expect(await db.selectFrom(table).select('user_id').where('user_id', '=', person.id).execute(), table).toEqual([]);
  }
  // The devices they signed in from (keyed digests: findTraces, which reads text, cannot see them), and their language.
  expect(await devices()).toEqual({ known_devices: null, known_devices_key_id: null, language: null });
  const recorded = await db.selectFrom('security_events').selectAll().where('type', '=', 'user_erased').where('target_id', '=', person.id).execute();
  expect(recorded).toHaveLength(1);
  expect(recorded[0]).toMatchObject({ actor_id: eraser.id, target_id: person.id, target_label: null, details: expect.objectContaining({ sessions: 1, second_factors: 1, recovery_codes: 10, api_keys_revoked: 1, messages: 3 }) });
  // Three messages: the one the fixture sent them, the security notice of their second factor (docs/MAIL.md), and the invitation they sent (it names them).

  // They can no longer sign in or refresh.
  expect((await request(app).post('/sessions').send({ session: { email: PERSON.email, password: PERSON.password } })).status).toBe(401);
  expect((await refresh(app, life.set)).status).toBe(401);
  expect((await request(app).get('/me').set('authorization', `Bearer ${life.set.access_token}`)).status).toBe(401);

  // The seal: it verifies, sealed before the erasure and after.
  clock.advance(60_000);
  await sealAuditEvents(db, clock.now());
  const report = await verify(db, clock.now());
  expect(report, report.problem ?? '').toMatchObject({ ok: true, eventsNotYetSealed: 0 });
  expect(report.eventsChecked).toBeGreaterThan(10);
  return life;
}

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('erasing a person', { timeout: budget({ passwordHash: 12 }) }, () => {
  it('leaves nothing of them in any table, the event feed or a payload, keeps what they did, and the seal verifies', async () => {
    await erasureLeavesNothing(database.db);
  });

  it('the audit trail still names an edit of an unrelated sealed event, of an erased event, and a fake erasure', async () => {
    const { person, clock } = await erasureLeavesNothing(database.db);
    const db = database.db;
    const now = clock.now();
    const erased = await db.selectFrom('security_events').select(['id', 'seal_id']).where('erased_for', '=', person.id).where('seal_id', 'is not', null).orderBy('id').executeTakeFirstOrThrow();
    const unrelated = await db
      .selectFrom('security_events')
      .select(['id', 'actor_label', 'seal_id'])
      .where('erased_at', 'is', null)
      .where('seal_id', 'is not', null)
      .where('actor_label', 'is not', null)
      .orderBy('id')
      .executeTakeFirstOrThrow();

    // An unrelated sealed event edited: named.
    await db.updateTable('security_events').set({ actor_label: 'someone else' }).where('id', '=', unrelated.id).execute();
    expect((await verify(db, now)).problem).toBe(`Event ${unrelated.id} does not match seal ${unrelated.seal_id}: it was altered after sealing.`);
    await db.updateTable('security_events').set({ actor_label: unrelated.actor_label }).where('id', '=', unrelated.id).execute();
    expect((await verify(db, now)).ok).toBe(true);

    // An erased event given back a label, or another type: named.
    await db.updateTable('security_events').set({ target_label: PERSON.firstName }).where('id', '=', erased.id).execute();
    expect((await verify(db, now)).problem).toBe(`Event ${erased.id} does not match seal ${erased.seal_id}: it was altered after sealing.`);
    await db.updateTable('security_events').set({ target_label: null }).where('id', '=', erased.id).execute();
    const { type } = await db.selectFrom('security_events').select('type').where('id', '=', erased.id).executeTakeFirstOrThrow();
    await db.updateTable('security_events').set({ type: 'role_deleted' }).where('id', '=', erased.id).execute();
    expect((await verify(db, now)).problem).toBe(`Event ${erased.id} does not match seal ${erased.seal_id}: it was altered after sealing.`);
    await db.updateTable('security_events').set({ type }).where('id', '=', erased.id).execute();
    expect((await verify(db, now)).ok).toBe(true);

    // A fake erasure: an unrelated event scrubbed as if erased, to hide what it said (put back afterwards: the file's later tests verify this database).
    const original = await db
      .selectFrom('security_events')
      .select(['actor_label', 'target_label', 'ip_address', 'user_agent', 'details', 'changes', 'who_salt', 'where_salt', 'what_salt'])
      .where('id', '=', unrelated.id)
      .executeTakeFirstOrThrow();
    await sql`update security_events set actor_label = null, target_label = null, ip_address = null, user_agent = null, details = '{}', changes = null,
      who_salt = null, where_salt = null, what_salt = null, erased_at = now() where id = ${unrelated.id}`.execute(db);
    expect((await verify(db, now)).problem).toBe(`Event ${unrelated.id} of seal ${unrelated.seal_id} is marked erased, but no erasure of a person it concerns is recorded: it was altered after sealing.`);
    await sql`update security_events set erased_at = null where id = ${unrelated.id}`.execute(db);
    expect((await verify(db, now)).problem).toMatch(new RegExp(`^Event ${unrelated.id} of seal ${unrelated.seal_id} has lost its who columns`));
    await db
      .updateTable('security_events')
      .set({ ...original, details: JSON.stringify(original.details), changes: original.changes === null ? null : JSON.stringify(original.changes) })
      .where('id', '=', unrelated.id)
      .execute();
    expect((await verify(db, now)).ok).toBe(true);
  });
});

/** A person stepped up, holding `permissions` (through a role of their own), and their bearer header. */
async function caller(app: Parameters<typeof request>[0], permissions: string[]) {
  const person = await createUser(database.db, { permissions });
  const set = await signIn(app, person.email, person.password);
  await database.db.updateTable('sessions').set({ stepped_up_at: new Date(), step_up_method: 'password' }).where('user_id', '=', person.id).execute();
  return { ...person, headers: { authorization: `Bearer ${set.access_token}` } };
}

const erase = (app: Parameters<typeof request>[0], headers: Record<string, string>, id: string, path = '/users/{id}/erasure') => request(app).post(path.replace('{id}', id)).set(headers);

describe('security: erasing a person', { timeout: budget({ passwordHash: 6 }) }, () => {
  it('erasing someone holding a permission the caller lacks is refused, changing nothing', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const eraser = await caller(app, ['users.erase', 'users.read']);
    const target = await createUser(database.db, { permissions: ['audit.read'] });
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await erase(app, eraser.headers, target.id);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['audit.read'] });
    expectContractResponse(res, 'POST', `/users/${target.id}/erasure`);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('probing with an unknown id is 404 not_found, and the French path and capitals find the person', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const eraser = await caller(app, ['users.erase']);
    for (const id of ['0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90']) {
      const res = await erase(app, eraser.headers, id);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe('not_found');
    }
    const target = await createUser(database.db);
    const res = await erase(app, eraser.headers, target.id.toUpperCase(), '/utilisateurs/{id}/effacement');
    expect(res.status, res.text).toBe(200);
    expect(res.body.erased_at).toEqual(expect.any(String));
    // Again: the tombstone, nothing more recorded.
    expect((await erase(app, eraser.headers, target.id)).status).toBe(200);
    expect(await database.db.selectFrom('security_events').select('id').where('type', '=', 'user_erased').where('target_id', '=', target.id).execute()).toHaveLength(1);
  });

  it('erasing the last administrator is refused, and nobody erases themselves', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const eraser = await caller(app, [...PERMISSIONS]);
    // The only active administrator(s) of this database: demote the others for the test.
    const adminId = await adminRoleId(database.db);
    const admin = await createUser(database.db);
    await database.db.deleteFrom('user_roles').where('role_id', '=', adminId).execute();
    await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: adminId }).execute();
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const last = await erase(app, eraser.headers, admin.id);
    expect(last.status).toBe(409);
    expect(last.body.code).toBe('last_admin');
    expectContractResponse(last, 'POST', `/users/${admin.id}/erasure`);
    const self = await erase(app, eraser.headers, eraser.id);
    expect(self.status).toBe(409);
    expect(self.body.code).toBe('self_erasure');
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('an API key cannot erase anyone, whatever it holds', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const key = await makeApiKey(database.db, [...PERMISSIONS]);
    const target = await createUser(database.db);
    const res = await erase(app, { 'x-api-key': key.secret }, target.id);
    expect([401, 403]).toContain(res.status);
    expect((await database.db.selectFrom('users').select('erased_at').where('id', '=', target.id).executeTakeFirstOrThrow()).erased_at).toBeNull();
  });

  it('attack: a holder of users.update and users.disable brings an erased person back through PATCH /users/{id} (active, named, given a role): 409 user_erased, nothing written', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const reviver = await caller(app, ['users.erase', 'users.read', 'users.update', 'users.disable', 'tasks.list']);
    const target = await createUser(database.db);
    expect((await erase(app, reviver.headers, target.id)).status).toBe(200);
    const role = await makeRole(database.db, ['tasks.list']);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    for (const body of [{ status: 'active' }, { first_name: 'Back', last_name: 'Again' }, { roles: [role.name] }, { status: 'disabled' }]) {
      const res = await request(app).patch(`/users/${target.id}`).set(reviver.headers).send(body);
      expect(res.status, `${JSON.stringify(body)}: ${res.text}`).toBe(409);
      expect(res.body.code).toBe('user_erased');
      expectContractResponse(res, 'PATCH', `/users/${target.id}`);
    }
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    // Reading the tombstone still answers it, as before.
    expect((await request(app).get(`/users/${target.id}`).set(reviver.headers)).body).toMatchObject({ status: 'disabled', roles: [], erased_at: expect.any(String) });
  });

  it('a stolen access token of an eraser cannot erase without a fresh proof', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const person = await createUser(database.db, { permissions: ['users.erase'] });
    const set = await signIn(app, person.email, person.password);
    const target = await createUser(database.db);
    const res = await erase(app, { authorization: `Bearer ${set.access_token}` }, target.id);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('step_up_required');
  });

  it('a sign-in racing the erasure opens no session: it waits for the person row, then finds the tombstone', async () => {
    const clock = new ManualClock(new Date());
    const { app, services } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const target = await createUser(database.db);
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    // Activity is read afresh each time: inside the holder's transaction PostgreSQL would keep showing its first snapshot of it.
    const waiting = async (event: string) => {
      for (;;) {
        await holder.query('select pg_stat_clear_snapshot()');
        const { rows } = await holder.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event = $1`, [event]);
        if (rows[0]!.n > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    try {
      // The erasure locks the person's row, then waits for the audit trail's chain lock, held here.
      await holder.query('begin');
      await holder.query('select pg_advisory_xact_lock(3, 0)');
      const erasing = services.erasure.erase(OPERATOR, target.id);
      await waiting('advisory');
      // The sign-in reads the person as they were (the password is right) and reaches its write.
      const signingIn = request(app).post('/sessions').set({ 'x-forwarded-for': '198.51.100.23' }).send({ session: { email: target.email, password: target.password } }).then((r) => r);
      await waiting('transactionid');
      await holder.query('commit');
      await erasing;
      const res = await signingIn;
      expect(res.status).toBe(401);
      expect(await database.db.selectFrom('sessions').select('id').where('user_id', '=', target.id).execute()).toEqual([]);
      // Nor is the sign-in recorded with its address against the erased person.
      expect(await database.db.selectFrom('security_events').select('id').where('user_id', '=', target.id).where('ip_address', '=', '198.51.100.23').execute()).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});

/**
 * What an erasure of `decoy` may touch: only what concerns the decoy by id, or holds its address.
 * Every other row of the tables an erasure searches, as it was.
 */
async function othersRows(db: Kysely<Database>, decoyId: string) {
  const events = await db
    .selectFrom('security_events')
    .select(['id', 'actor_label', 'target_label', 'ip_address', 'user_agent', 'details', 'changes', 'erased_at'])
    .where((eb) => eb.and([eb.or([eb('user_id', 'is', null), eb('user_id', '!=', decoyId)]), eb.or([eb('actor_id', 'is', null), eb('actor_id', '!=', decoyId)]), eb.or([eb('target_id', 'is', null), eb('target_id', '!=', decoyId)])]))
    .orderBy('id')
    .execute();
  const messages = await db.selectFrom('messages').select(['id', 'body']).where((eb) => eb.or([eb('user_id', 'is', null), eb('user_id', '!=', decoyId)])).orderBy('id').execute();
  const kept = await db.selectFrom('idempotency_keys').select(['key_digest', 'body']).where('body', 'not like', `%${decoyId}%`).orderBy('key_digest').execute();
  const payloads = await db.selectFrom('events').select(['id', 'payload']).where(sql<string>`payload::text`, 'not like', `%${decoyId}%`).orderBy('id').execute();
  return { events, messages, kept, payloads };
}

describe('security: erasing a decoy touches nobody else', { timeout: budget({ passwordHash: 8 }) }, () => {
  // The attacker may make people and erase them (users.create, users.erase), nothing more. They
  // make a decoy whose name or address is chosen to match other people's records, and erase it.
  async function eraseDecoy(decoy: { email: string; first_name: string; last_name: string }, before?: () => Promise<void>) {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const attacker = await caller(app, ['users.create', 'users.erase', 'users.read']);
    const made = await request(app).post('/users').set(attacker.headers).send({ ...decoy, password: 'a long enough password 1' });
    expect(made.status, made.text).toBe(201);
    await before?.();
    const snapshot = await othersRows(database.db, made.body.id);
    const res = await erase(app, attacker.headers, made.body.id);
    expect(res.status, res.text).toBe(200);
    return { app, snapshot, after: await othersRows(database.db, made.body.id) };
  }

  it('attack: a decoy named `":` `"` (text every JSON object of the journal holds) scrubs no one else\'s audit event, and the seal still verifies', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const admin = await caller(app, ['invitations.manage', 'users.create']);
    const invited = await request(app).post('/invitations').set(admin.headers).send({ email: `invitee-${Date.now()}@example.net` });
    expect(invited.status, invited.text).toBe(201);
    await sealAuditEvents(database.db, new Date(Date.now() + 60_000));
    const { snapshot, after } = await eraseDecoy({ email: `decoy-${Date.now()}@example.com`, first_name: '":', last_name: '"' });
    expect(after.events).toEqual(snapshot.events);
    expect(snapshot.events.some((e) => e.changes !== null && e.erased_at === null)).toBe(true);
    const report = await verify(database.db, new Date(Date.now() + 60_000));
    expect(report, report.problem ?? '').toMatchObject({ ok: true });
  });

  it('attack: a decoy named "Back Office" (words of every mail template) deletes no one else\'s notice or recovery link', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const victim = await createUser(database.db, { permissions: ['audit.read'] });
    expect((await request(app).post('/password-resets').send({ email: victim.email })).status).toBe(202);
    const { snapshot, after } = await eraseDecoy({ email: `decoy-${Date.now()}@example.com`, first_name: 'Back', last_name: 'Office' });
    expect(snapshot.messages.some((m) => /back office/i.test(m.body))).toBe(true);
    expect(after.messages).toEqual(snapshot.messages);
  });

  it('attack: a namesake decoy (the victim\'s very name) leaves the victim\'s sign-ins labelled and their kept answers in place', async () => {
    const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
    const victim = await caller(app, ['users.create']);
    const made = await request(app).post('/users').set(victim.headers).set('idempotency-key', `namesake-${Date.now()}`).send({ email: `made-${Date.now()}@example.com`, first_name: 'Grace', last_name: 'Hopper', password: 'a long enough password 1' });
    expect(made.status, made.text).toBe(201);
    const { first_name, last_name } = await database.db.selectFrom('users').select(['first_name', 'last_name']).where('id', '=', victim.id).executeTakeFirstOrThrow();
    const { snapshot, after } = await eraseDecoy({ email: `decoy-${Date.now()}@example.com`, first_name, last_name });
    expect(snapshot.events.some((e) => e.actor_label === `${first_name} ${last_name}`)).toBe(true);
    expect(after.events).toEqual(snapshot.events);
    expect(after.kept).toEqual(snapshot.kept);
    expect(after.payloads).toEqual(snapshot.payloads);
  });

  it('attack: a decoy whose address ends another\'s (x@… inside max@…, or x@example.com inside x@example.com.au) touches none of theirs', async () => {
    const tag = Date.now();
    const pairs: [victimEmail: string, decoyEmail: string][] = [
      [`amax-${tag}@example.com`, `max-${tag}@example.com`],
      [`max-${tag}@example.com.au`, `max-${tag}@example.com`],
    ];
    for (const [victimEmail, decoyEmail] of pairs) {
      const { app } = createTestApp(database.db, { clock: new ManualClock(new Date()) });
      const admin = await caller(app, ['users.create', 'invitations.manage']);
      const created = await request(app).post('/invitations').set(admin.headers).set('idempotency-key', `addr-${victimEmail}`).send({ email: victimEmail });
      expect(created.status, created.text).toBe(201);
      const { snapshot, after } = await eraseDecoy({ email: decoyEmail, first_name: 'Decoy', last_name: 'Person' });
      expect(snapshot.kept.some((k) => k.body.includes(victimEmail))).toBe(true);
      expect(after.events, decoyEmail).toEqual(snapshot.events);
      expect(after.kept, decoyEmail).toEqual(snapshot.kept);
      expect(after.payloads, decoyEmail).toEqual(snapshot.payloads);
      expect(after.messages, decoyEmail).toEqual(snapshot.messages);
    }
  });
});

describe('the operator erases from the command line', () => {
  it('asks for --yes, erases, and `audit verify` passes after it and still names another edit', { timeout: budget({ cliRun: 5 }) }, async () => {
    const db = database.db;
    const target = await createUser(db);
    const cli = (args: string[]) => runCli(args, { databaseUrl: database.url, env: { LOG_LEVEL: 'warn' } });
    // Events about the person, sealed before the erasure.
    const { app } = createTestApp(db, { clock: new ManualClock(new Date()) });
    await signIn(app, target.email, target.password, PERSON.userAgent);
    await sealAuditEvents(db, new Date());

    const unconfirmed = await cli(['users', 'erase', '--email', target.email]);
    expect(unconfirmed.status).toBe(1);
    expect(unconfirmed.stderr).toContain('--yes');
    expect((await db.selectFrom('users').select('erased_at').where('id', '=', target.id).executeTakeFirstOrThrow()).erased_at).toBeNull();

    const erased = await cli(['users', 'erase', '--email', target.email, '--yes']);
    expect(erased.status, erased.stderr).toBe(0);
    expect(erased.stdout).toBe(`Erased ${target.id}.\n`);
    expect(await findTraces(db, [target.email, PERSON.userAgent])).toEqual([]);
    await sealAuditEvents(db, new Date());

    const verified = await cli(['audit', 'verify']);
    expect(verified.status, verified.stdout).toBe(0);
    expect(verified.stdout).toMatch(/^OK: /);
    const other = await db.selectFrom('security_events').select(['id', 'seal_id', 'request_id']).where('erased_at', 'is', null).where('seal_id', 'is not', null).orderBy('id', 'desc').executeTakeFirstOrThrow();
    await sql`update security_events set request_id = 'edited' where id = ${other.id}`.execute(db);
    const failed = await cli(['audit', 'verify']);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain(`FAILED: Event ${other.id} does not match seal ${other.seal_id}`);
    await sql`update security_events set request_id = ${other.request_id} where id = ${other.id}`.execute(db);
  });
});

describe('on the embedded database', () => {
  it('erasing leaves nothing, keeps what they did, and the seal verifies', { timeout: budget({ pgliteStart: 1, passwordHash: 12 }) }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-pglite-erasure-'));
    const service = await buildService(loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir, SWEEP_INTERVAL_S: '0', ADMIN_SECOND_FACTOR: 'optional', SEALING_KEYS: process.env.SEALING_KEYS! }), captureLogs().logger);
    try {
      expect(service.database.kind).toBe('embedded');
      await erasureLeavesNothing(service.database.db);
    } finally {
      await service.stopBackgroundWork();
      await service.database.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
