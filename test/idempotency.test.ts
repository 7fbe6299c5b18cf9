// Idempotency-Key on the creates, tried as a flaky network and an attacker would: retries,
// storms, a changed body, another caller's key value, a crash in the middle, a secret shown once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase, testPool } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { secondInstance } from './support/second-instance.js';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { PreparingClient } from '../src/db/prepared-statements.js';
import { runFixedStatementsOnPool } from '../src/db/fixed-statement.js';
import { ManualClock } from '../src/clock.js';
import { sweep } from '../src/maintenance/sweeper.js';
import { IDEMPOTENCY_TTL_MS } from '../src/idempotency/service.js';

let database: TestDatabase;
let adminId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
});
afterAll(() => database.destroy());

const rolesNamed = async (name: string) => (await database.db.selectFrom('roles').select('id').where('name', '=', name).execute()).length;
const auditEvents = async (type: string, label: string) =>
  (await database.db.selectFrom('security_events').select('id').where('type', '=', type).where('target_label', '=', label).execute()).length;

/** Raw bytes of a body, to compare answers byte for byte. */
const raw = (res: request.Response) => res.text;

describe('Idempotency-Key', () => {
  it('a retried POST /roles replays the first answer byte for byte, with one role and one audit event', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `retried-${key.slice(0, 8)}`;
    const send = () => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expectContractResponse(first, 'POST', '/roles');
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(raw(again)).toBe(raw(first));
    expect(again.headers.etag).toBe(first.headers.etag);
    expectContractResponse(again, 'POST', '/roles');
    expect(await rolesNamed(name)).toBe(1);
    expect(await auditEvents('role_created', name)).toBe(1);
  });

  it('the same key with a changed body answers 422 idempotency_key_reused and creates nothing', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `changed-${key.slice(0, 8)}`;
    const post = (body: object) => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send(body);
    expect((await post({ name, permissions: ['users.list'] })).status).toBe(201);
    const changed = await post({ name: `${name}-2`, permissions: ['users.list'] });
    expect(changed.status).toBe(422);
    expect(changed.body.code).toBe('idempotency_key_reused');
    expectContractResponse(changed, 'POST', '/roles');
    // The same JSON written with other bytes is another request too (the digest is of the body as received).
    const reformatted = await request(app)
      .post('/roles')
      .set('authorization', testBearer(adminId))
      .set('idempotency-key', key)
      .set('content-type', 'application/json')
      .send(`{ "name": "${name}", "permissions": ["users.list"] }`);
    expect(reformatted.status).toBe(422);
    // And so is the same body asking for another key style.
    const camel = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).set('x-api-inflection', 'camel').send({ name, permissions: ['users.list'] });
    expect(camel.status).toBe(422);
    expect(await rolesNamed(`${name}-2`)).toBe(0);
  });

  it("replaying with another caller's key value never answers the first caller's answer", async () => {
    const { app } = createAppWithTestBearer(database.db);
    const attacker = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
    const key = randomUUID();
    const name = `victim-${key.slice(0, 8)}`;
    const victim = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    expect(victim.status).toBe(201);
    // The attacker learned the key value and sends the very same request: it is their own request, run as such.
    const stolen = await request(app).post('/roles').set('authorization', testBearer(attacker)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    expect(stolen.status).toBe(409);
    expect(stolen.body.code).toBe('name_taken');
    expect(stolen.headers['idempotent-replayed']).toBeUndefined();
    expect(stolen.text).not.toContain(victim.body.id);
    // With another body, the key value is simply theirs: a creation of their own.
    const theirs = await request(app).post('/roles').set('authorization', testBearer(attacker)).set('idempotency-key', key).send({ name: `${name}-a`, permissions: [] });
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    // An API key is a caller of its own too.
    const apiKey = await makeApiKey(database.db, ['roles.manage', 'users.list']);
    const byKey = await request(app).post('/roles').set('x-api-key', apiKey.secret).set('idempotency-key', key).send({ name: `${name}-k`, permissions: [] });
    expect(byKey.status).toBe(201);
    expect(byKey.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a retry storm of 50 identical concurrent POST /users makes one user and one audit event', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const email = `storm-${key.slice(0, 8)}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        request(app).post('/users').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ email, first_name: 'Storm', last_name: 'Trooper' }),
      ),
    );
    const created = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 201) expect(raw(a)).toBe(raw(created[0]!));
      else {
        expect(a.status).toBe(409);
        expect(a.body.code).toBe('idempotency_key_in_progress');
        expect(a.headers['retry-after']).toBe('1');
      }
    }
    const users = await database.db.selectFrom('users').select('id').where('email', '=', email).execute();
    expect(users).toHaveLength(1);
    expect(await database.db.selectFrom('security_events').select('id').where('type', '=', 'user_created').where('target_id', '=', users[0]!.id).execute()).toHaveLength(1);
  });

  it('a storm of 50 identical POST /roles across two service instances makes one role', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const second = await secondInstance(database.url, { clock });
    try {
      const apiKey = await makeApiKey(database.db, ['roles.manage', 'users.list']);
      const key = randomUUID();
      const name = `two-${key.slice(0, 8)}`;
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          request(i % 2 === 0 ? app : second.app).post('/roles').set('x-api-key', apiKey.secret).set('idempotency-key', key).send({ name, permissions: [] }),
        ),
      );
      expect(answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.code === 'idempotency_key_in_progress'))).toBe(true);
      expect(await rolesNamed(name)).toBe(1);
      expect(await auditEvents('role_created', name)).toBe(1);
    } finally {
      await second.close();
    }
  });

  it('a storm of 50 identical POST /tasks across two service instances makes one task (no unique name to meet: the key alone decides)', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const second = await secondInstance(database.url, { clock });
    try {
      const apiKey = await makeApiKey(database.db, ['tasks.create', 'tasks.read']);
      const key = randomUUID();
      const title = `Storm ${key.slice(0, 8)}`;
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) => request(i % 2 === 0 ? app : second.app).post('/tasks').set('x-api-key', apiKey.secret).set('idempotency-key', key).send({ title })),
      );
      const first = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined);
      expect(first).toHaveLength(1);
      for (const a of answers) {
        if (a.status === 201) {
          expect(a.text).toBe(first[0]!.text);
          expect(a.headers.location).toBe(first[0]!.headers.location);
        } else expect([a.status, a.body.code, a.headers['retry-after']]).toEqual([409, 'idempotency_key_in_progress', '1']);
      }
      expect(await database.db.selectFrom('tasks').select('id').where('title', '=', title).execute()).toHaveLength(1);
      expect(await auditEvents('task_created', title)).toBe(1);
    } finally {
      await second.close();
    }
  });

  it('a retried POST /meetings replays its answer; the replay keeps the Location and the ETag', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const startsAt = new Date(Date.now() + 86_400_000);
    const body = { title: `Retried ${key.slice(0, 8)}`, starts_at: startsAt.toISOString(), ends_at: new Date(startsAt.getTime() + 1_800_000).toISOString() };
    const send = () => request(app).post('/meetings').set('authorization', testBearer(adminId)).set('idempotency-key', key).send(body);
    const first = await send();
    expect(first.status).toBe(201);
    const again = await send();
    expect([again.status, again.headers['idempotent-replayed'], again.text, again.headers.location, again.headers.etag]).toEqual([
      201,
      'true',
      first.text,
      first.headers.location,
      first.headers.etag,
    ]);
    expectContractResponse(again, 'POST', '/meetings');
    expect(await database.db.selectFrom('meetings').select('id').where('title', '=', body.title).execute()).toHaveLength(1);
  });

  it('a secret shown once is never stored: the replay of POST /api-keys and of a rotation answers secret: null', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `secret-${key.slice(0, 8)}`;
    const create = () => request(app).post('/api-keys').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^bok_/);
    const replay = await create();
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['cache-control']).toBe('no-store');
    expect(replay.body).toEqual({ ...first.body, secret: null });
    expectContractResponse(replay, 'POST', '/api-keys');
    const id = first.body.api_key.id as string;

    const rotationKey = randomUUID();
    const rotate = () => request(app).post(`/api-keys/${id}/rotate`).set('authorization', testBearer(adminId)).set('idempotency-key', rotationKey).send({});
    const rotated = await rotate();
    expect(rotated.status).toBe(200);
    const rotatedAgain = await rotate();
    expect([rotatedAgain.status, rotatedAgain.headers['idempotent-replayed'], rotatedAgain.body.secret]).toEqual([200, 'true', null]);
    expectContractResponse(rotatedAgain, 'POST', `/api-keys/${id}/rotate`);
    // Rotated once: the secret of the first rotation is the key's secret.
    expect((await request(app).get('/users').set('x-api-key', rotated.body.secret)).status).toBe(200);
    expect(await auditEvents('api_key_rotated', name)).toBe(1);
    // Nowhere in the table, in any form.
    const stored = await database.db.selectFrom('idempotency_keys').select(['body', 'headers']).execute();
    for (const secret of [first.body.secret, rotated.body.secret]) expect(JSON.stringify(stored)).not.toContain(secret.slice(4, 30));
  });

  it('a failed create stores nothing: the same key runs again once the cause is gone', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `missing-role-${key.slice(0, 6)}`;
    const send = () =>
      request(app).post('/users').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ email: `${key.slice(0, 8)}@example.com`, first_name: 'A', last_name: 'B', roles: [name] });
    expect((await send()).body.code).toBe('unknown_role');
    await request(app).post('/roles').set('authorization', testBearer(adminId)).send({ name, permissions: [] });
    const created = await send();
    expect([created.status, created.headers['idempotent-replayed']]).toEqual([201, undefined]);
  });

  it('a create whose checks before its transaction fail is failed as any other: a live answer under the key decides (a right lost since, another body)', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const role = await makeRole(database.db, ['api_keys.manage', 'users.list']);
    const manager = (await makeUser(database.db, { roleIds: [role.id] })).id;
    const key = randomUUID();
    const name = `drafted-${key.slice(0, 8)}`;
    const post = (body: object) => request(app).post('/api-keys').set('authorization', testBearer(manager)).set('idempotency-key', key).send(body);
    const first = await post({ name, permissions: ['users.list'] });
    expect(first.status).toBe(201);
    // The key's permission is checked with its secret made, before the transaction opens: losing it since refuses a new request, not the replay.
    await database.db.deleteFrom('role_permissions').where('role_id', '=', role.id).where('permission', '=', 'users.list').execute();
    expect((await request(app).post('/api-keys').set('authorization', testBearer(manager)).send({ name: `${name}-new`, permissions: ['users.list'] })).status).toBe(403);
    const replay = await post({ name, permissions: ['users.list'] });
    expect([replay.status, replay.headers['idempotent-replayed'], replay.body]).toEqual([201, 'true', { ...first.body, secret: null }]);
    // Another body under the same key, refused by those same checks, is still another request.
    const other = await post({ name, permissions: ['users.list'], expires_at: '2000-01-01T00:00:00Z' });
    expect([other.status, other.body.code]).toEqual([422, 'idempotency_key_reused']);
    expect((await database.db.selectFrom('api_keys').select('id').where('name', 'like', `${name}%`).execute()).length).toBe(1);
  });

  it('refuses a key longer than 255 characters or with a control character, before doing anything', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const name = `badkey-${randomUUID().slice(0, 8)}`;
    for (const key of ['k'.repeat(256), 'tab\there']) {
      const res = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: [] });
      expect(res.status).toBe(400);
      expectContractResponse(res, 'POST', '/roles');
    }
    expect(await rolesNamed(name)).toBe(0);
  });

  it('an answer is kept 24 hours: then the sweep deletes it and the key is free again', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = randomUUID();
    const title = `Expiring ${key.slice(0, 8)}`;
    const send = () => request(app).post('/tasks').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ title });
    expect((await send()).status).toBe(201);
    clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    expect((await send()).headers['idempotent-replayed']).toBe('true');
    clock.advance(2000);
    expect((await sweep(database.db, clock.now(), { throttleWindowS: 900, sessionIdleTimeoutS: 3600, sessionRetentionS: 86_400 })).idempotencyAnswers).toBeGreaterThanOrEqual(1);
    const fresh = await send();
    expect([fresh.status, fresh.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(await database.db.selectFrom('tasks').select('id').where('title', '=', title).execute()).toHaveLength(2);
  });
});

/**
 * A test-only trigger on idempotency_keys that makes the service's storing statement wait for a
 * lock the test holds: the request is then paused exactly between doing its work and storing its
 * answer (BEFORE INSERT), or between storing it and committing (AFTER INSERT). The test sees it
 * waiting in pg_stat_activity, no sleep involved.
 */
async function pauseStoring(when: 'before' | 'after') {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`create or replace function test_pause_storing() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(4242); return new; end $$`);
  await admin.query(`create trigger test_pause_storing ${when} insert on idempotency_keys for each row execute function test_pause_storing()`);
  const holder = new pg.Client({ connectionString: database.url });
  await holder.connect();
  await holder.query('begin');
  await holder.query('select pg_advisory_xact_lock(4242)');
  return {
    /** The backend pid of the request paused on the lock, once it is. */
    async paused(): Promise<number> {
      for (;;) {
        const { rows } = await admin.query(
          `select l.pid from pg_locks l where l.locktype = 'advisory' and l.objid = 4242 and not l.granted`,
        );
        if (rows[0]) return rows[0].pid as number;
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
    async release() {
      await holder.query('commit');
      await holder.end();
      await admin.query('drop trigger test_pause_storing on idempotency_keys');
      await admin.end();
    },
    kill: (pid: number) => admin.query('select pg_terminate_backend($1)', [pid]),
  };
}

/**
 * A test-only deferred constraint trigger on idempotency_keys: a transaction that stores an answer
 * runs every statement (the work, then the answer) and fails at its COMMIT.
 */
async function failCommitsThatStore() {
  const admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
  await admin.query(`create or replace function test_fail_commit() returns trigger language plpgsql as $$
    begin raise exception 'refused at commit (test)'; end $$`);
  await admin.query('create constraint trigger test_fail_commit after insert on idempotency_keys deferrable initially deferred for each row execute function test_fail_commit()');
  return {
    async release() {
      await admin.query('drop trigger test_fail_commit on idempotency_keys');
      await admin.end();
    },
  };
}

/** A database handle whose in-use connections may be killed, as the service's (src/db/database.ts) listens for that. */
function killableDatabase() {
  const pool = testPool({ connectionString: database.url, max: 5, Client: PreparingClient });
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  runFixedStatementsOnPool(db, pool);
  return db;
}

describe('Idempotency-Key when the first request is slow or dies', () => {
  it('a crash between the work and storing the answer creates nothing: the retry creates once', async () => {
    const db = killableDatabase();
    const { app } = createAppWithTestBearer(db);
    const key = randomUUID();
    const name = `crashed-${key.slice(0, 8)}`;
    const send = () => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: [] });
    const pause = await pauseStoring('before');
    try {
      const first = send().then((r) => r); // supertest sends on then()
      // The role is inserted and its audit event recorded, in the open transaction; then the process "dies".
      await pause.kill(await pause.paused());
      expect((await first).status).toBeGreaterThanOrEqual(500);
    } finally {
      await pause.release();
    }
    expect(await rolesNamed(name)).toBe(0);
    expect(await auditEvents('role_created', name)).toBe(0);
    const retry = await send();
    expect([retry.status, retry.headers['idempotent-replayed']]).toEqual([201, undefined]);
    expect(await send().then((r) => r.headers['idempotent-replayed'])).toBe('true');
    expect(await rolesNamed(name)).toBe(1);
    expect(await auditEvents('role_created', name)).toBe(1);
    await db.destroy();
  });

  it('a create whose transaction fails after its work and its answer are written keeps neither: the retry creates once', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const title = `Refused at commit ${key.slice(0, 8)}`;
    const send = () => request(app).post('/tasks').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ title });
    const tasksTitled = async () => (await database.db.selectFrom('tasks').select('id').where('title', '=', title).execute()).length;
    const refusing = await failCommitsThatStore();
    try {
      // The task, its audit event and the answer are all written, in the transaction the edge opened; its COMMIT fails.
      expect((await send()).status).toBeGreaterThanOrEqual(500);
    } finally {
      await refusing.release();
    }
    // Nothing is left: an answer kept apart from the work would now be replayed for a task that does not exist.
    expect(await tasksTitled()).toBe(0);
    expect(await auditEvents('task_created', title)).toBe(0);
    const retry = await send();
    expect([retry.status, retry.headers['idempotent-replayed']]).toEqual([201, undefined]);
    const replay = await send();
    expect([replay.status, replay.headers['idempotent-replayed'], replay.text]).toEqual([201, 'true', retry.text]);
    expect(await tasksTitled()).toBe(1);
    expect(await auditEvents('task_created', title)).toBe(1);
  });

  it('while the first is still running, the same key answers 409 with Retry-After; then the replay', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const title = `Slow ${key.slice(0, 8)}`;
    const send = () => request(app).post('/tasks').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ title });
    const pause = await pauseStoring('after');
    let first: request.Response;
    try {
      const pending = send().then((r) => r); // supertest sends on then()
      await pause.paused(); // stored, not committed: the key's lock is held
      const concurrent = await send();
      expect([concurrent.status, concurrent.body.code, concurrent.headers['retry-after']]).toEqual([409, 'idempotency_key_in_progress', '1']);
      expectContractResponse(concurrent, 'POST', '/tasks');
      const changed = await request(app).post('/tasks').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ title: `${title}!` });
      expect(changed.status).toBe(409);
      await pause.release();
      first = await pending;
    } catch (err) {
      await pause.release().catch(() => {});
      throw err;
    }
    expect(first.status).toBe(201);
    const retry = await send();
    expect([retry.status, retry.headers['idempotent-replayed'], retry.text]).toEqual([201, 'true', first.text]);
    expect(await database.db.selectFrom('tasks').select('id').where('title', 'like', `${title}%`).execute()).toHaveLength(1);
  });
});
