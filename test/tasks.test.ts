// Tasks for real: every operation with API keys and signed-in people, the rule that
// the permission alone gives a right, what a disabled assignee or a revoked creator reads like,
// refused input that writes nothing, and the audit journal of every change.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { makeApiKey, makeRole, makeUser } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';

type App = ReturnType<typeof createTestApp>['app'];
type Credential = Record<string, string>;

let database: TestDatabase;
let app: App;
/** Every task permission: what an administrator of tasks holds. */
const ALL = ['tasks.list', 'tasks.read', 'tasks.create', 'tasks.update', 'tasks.delete'];
let manager: Credential;
let managerKeyId: string;
let managerKeyName: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createTestApp(database.db, { clock: systemClock }));
  const key = await makeApiKey(database.db, ALL, { name: 'Task robot' });
  manager = { 'x-api-key': key.secret };
  managerKeyId = key.id;
  managerKeyName = 'Task robot';
});
afterAll(() => database.destroy());

/** A person signed in for real, holding `permissions` through a role of their own. */
async function person(permissions: string[]) {
  const user = await createUser(database.db, { permissions });
  const tokens = await signIn(app, user.email, user.password);
  return { id: user.id, auth: { authorization: `Bearer ${tokens.access_token}` } as Credential };
}

async function send(method: 'get' | 'post' | 'patch' | 'delete', path: string, credential: Credential, body?: object) {
  let req = request(app)[method](path).set(credential);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  expectContractResponse(res, method, path);
  return res;
}

const create = (body: object, credential: Credential = manager) => send('post', '/tasks', credential, body);

async function newTask(body: object = {}) {
  const res = await create({ title: `Task ${randomUUID().slice(0, 8)}`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body as Record<string, unknown> & { id: string };
}

const lastEvent = (type: string) =>
  database.db.selectFrom('security_events').selectAll().where('type', '=', type).orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();

const version = async (id: string) => (await database.db.selectFrom('tasks').select('version').where('id', '=', id).executeTakeFirstOrThrow()).version;

describe('the operations', () => {
  it('POST /tasks creates a task with its defaults, answers 201 with its Location, and records who created it', async () => {
    const res = await create({ title: 'Call back the Lyon office' });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.location).toBe(`/tasks/${res.body.id}`);
    expect(res.body).toMatchObject({
      title: 'Call back the Lyon office',
      description: null,
      status: 'todo',
      priority: 'normal',
      due_at: null,
      assignee_id: null,
      assignee: null,
      created_by: { type: 'api_key', id: managerKeyId, label: managerKeyName },
      completed_at: null,
    });
    expect(res.body.created_at).toBe(res.body.updated_at);
    expect(await version(res.body.id)).toBe(1);
    const event = await lastEvent('task_created');
    expect(event).toMatchObject({ actor_type: 'api_key', actor_id: managerKeyId, target_type: 'task', target_id: res.body.id, target_label: 'Call back the Lyon office' });
    expect(event.changes).toEqual({
      before: null,
      after: { title: 'Call back the Lyon office', description: null, status: 'todo', priority: 'normal', due_at: null, assignee_id: null, completed_at: null },
    });
  });

  it('a signed-in person creates a task as themselves, assigned to someone, and reads it at /tasks/{id} and /taches/{id}', async () => {
    const ada = await person(ALL);
    const grace = await makeUser(database.db);
    const res = await create({ title: 'Plan', description: 'line one\nline two', priority: 'urgent', due_at: '2026-12-15T17:00:00Z', assignee_id: grace.id }, ada.auth);
    expect(res.status, res.text).toBe(201);
    expect(res.body).toMatchObject({
      description: 'line one\nline two',
      priority: 'urgent',
      due_at: '2026-12-15T17:00:00.000Z',
      assignee_id: grace.id,
      assignee: { id: grace.id, label: 'Test User', status: 'active' },
      created_by: { type: 'user', id: ada.id, label: expect.stringMatching(/^Test Person/) },
    });
    for (const path of [`/tasks/${res.body.id}`, `/taches/${res.body.id}`]) {
      const read = await send('get', path, ada.auth);
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    }
  });

  it('PATCH changes any writable field, null clears an optional one, and completed_at follows done; each change bumps the version and is journaled', async () => {
    const assignee = await makeUser(database.db);
    const task = await newTask({ description: 'old', due_at: '2027-01-01T00:00:00Z', assignee_id: assignee.id });
    const done = await send('patch', `/tasks/${task.id}`, manager, { status: 'done', title: '  Renamed  ' });
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: 'done', title: 'Renamed', completed_at: expect.any(String) });
    expect(await version(task.id)).toBe(2);
    const completedAt = done.body.completed_at as string;
    expect((await lastEvent('task_updated')).changes).toEqual({
      before: { title: task.title, status: 'todo', completed_at: null },
      after: { title: 'Renamed', status: 'done', completed_at: completedAt },
    });

    // Staying done keeps the time it became done.
    const still = await send('patch', `/tasks/${task.id}`, manager, { status: 'done', priority: 'low' });
    expect(still.body).toMatchObject({ completed_at: completedAt, priority: 'low' });

    const cleared = await send('patch', `/tasks/${task.id}`, manager, { description: null, due_at: null, assignee_id: null, status: 'in_progress' });
    expect(cleared.status, cleared.text).toBe(200);
    expect(cleared.body).toMatchObject({ description: null, due_at: null, assignee_id: null, assignee: null, status: 'in_progress', completed_at: null });
    expect(await version(task.id)).toBe(4);
    expect((await lastEvent('task_updated')).changes).toEqual({
      before: { description: 'old', due_at: '2027-01-01T00:00:00.000Z', assignee_id: assignee.id, status: 'done', completed_at: completedAt },
      after: { description: null, due_at: null, assignee_id: null, status: 'in_progress', completed_at: null },
    });
  });

  it('a PATCH that changes nothing writes nothing: no new version, no event', async () => {
    const task = await newTask({ priority: 'high' });
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const events = await database.db.selectFrom('security_events').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
    const res = await send('patch', `/tasks/${task.id}`, manager, { priority: 'high', title: task.title });
    expect(res.status).toBe(200);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    expect(await database.db.selectFrom('security_events').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow()).toEqual(events);
  });

  it('DELETE answers 204, the task is gone (404 after), and the journal keeps what it was', async () => {
    const task = await newTask({ description: 'kept in the journal' });
    const res = await send('delete', `/tasks/${task.id}`, manager);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect((await send('get', `/tasks/${task.id}`, manager)).status).toBe(404);
    expect((await send('delete', `/tasks/${task.id}`, manager)).status).toBe(404);
    const event = await lastEvent('task_deleted');
    expect(event).toMatchObject({ target_type: 'task', target_id: task.id, target_label: task.title });
    expect(event.changes).toMatchObject({ before: { title: task.title, description: 'kept in the journal' }, after: null });
  });

  it('the French paths serve the same operations', async () => {
    const created = await send('post', '/taches', manager, { title: 'Tâche' });
    expect(created.status).toBe(201);
    expect((await send('patch', `/taches/${created.body.id}`, manager, { status: 'cancelled' })).body.status).toBe('cancelled');
    expect((await send('get', `/taches?search=tache`, manager)).body.data.map((t: { id: string }) => t.id)).toContain(created.body.id);
    expect((await send('delete', `/taches/${created.body.id}`, manager)).status).toBe(204);
  });
});

describe('the permission is the only source of a right (docs/AUTH.md, Tasks)', () => {
  it('a partner holding only tasks.create and tasks.list creates and lists tasks, but cannot read one by id, change or delete it', async () => {
    const partner = { 'x-api-key': (await makeApiKey(database.db, ['tasks.create', 'tasks.list'])).secret };
    const created = await create({ title: 'From the partner' }, partner);
    expect(created.status).toBe(201);
    const listed = await send('get', '/tasks?search=From%20the%20partner', partner);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toContain(created.body.id);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    for (const [method, permission, body] of [['get', 'tasks.read'], ['patch', 'tasks.update', { status: 'done' }], ['delete', 'tasks.delete']] as const) {
      const res = await send(method, `/tasks/${created.body.id}`, partner, body);
      expect(res.status, `${method}: ${res.text}`).toBe(403);
      expect(res.body).toMatchObject({ code: 'permission_denied', required_permission: permission });
    }
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('attack: the assignee without tasks.update changes "their" task, or its creator deletes it without tasks.delete: 403, nothing written', async () => {
    const assignee = await person(['tasks.read', 'tasks.list', 'tasks.create']);
    const task = (await create({ title: 'Mine?', assignee_id: assignee.id }, assignee.auth)).body as { id: string };
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const patch = await send('patch', `/tasks/${task.id}`, assignee.auth, { status: 'done' });
    expect(patch.status).toBe(403);
    expect(patch.body.required_permission).toBe('tasks.update');
    const del = await send('delete', `/tasks/${task.id}`, assignee.auth);
    expect(del.status).toBe(403);
    expect(del.body.required_permission).toBe('tasks.delete');
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('attack (BOLA probe): a caller lacking the permission gets the same 403 for an existing id, an unknown one and a malformed one', async () => {
    const task = await newTask();
    for (const credential of [{ 'x-api-key': (await makeApiKey(database.db, ['tasks.list'])).secret }, (await person(['tasks.list'])).auth]) {
      for (const [method, body] of [['get'], ['patch', { title: 'x' }], ['delete']] as const) {
        const answers = [];
        for (const id of [task.id, randomUUID(), 'not-a-uuid']) {
          const res = await send(method, `/tasks/${id}`, credential, body);
          answers.push({ status: res.status, code: res.body.code, required: res.body.required_permission, detail: res.body.detail });
        }
        expect(answers[0]!.status).toBe(403);
        expect(answers[1]).toEqual(answers[0]);
        expect(answers[2]).toEqual(answers[0]);
      }
    }
  });

  it('attack (BOLA probe): a holder gets the same 404 for an unknown id, a malformed id, and the id of a user, a role or an API key', async () => {
    const holder = await person(ALL);
    const user = await makeUser(database.db);
    const role = await makeRole(database.db, []);
    const ids = [randomUUID(), 'not-a-uuid', '1', `${randomUUID()}x`, user.id, role.id, managerKeyId, holder.id];
    for (const credential of [manager, holder.auth]) {
      for (const [method, body] of [['get'], ['patch', { title: 'x' }], ['delete']] as const) {
        for (const id of ids) {
          const res = await send(method, `/tasks/${encodeURIComponent(id)}`, credential, body);
          expect(res.status, `${method} ${id}: ${res.text}`).toBe(404);
          expect(res.body).toMatchObject({ code: 'not_found', detail: 'No task has this id.' });
        }
      }
    }
  });

  it('every holder of tasks.list sees every task of the organisation, whoever created or holds it', async () => {
    const someone = await person(['tasks.create']);
    const theirs = (await create({ title: `Somebody else's ${randomUUID()}` }, someone.auth)).body as { id: string; title: string };
    const reader = await person(['tasks.list', 'tasks.read']);
    expect((await send('get', `/tasks/${theirs.id}`, reader.auth)).status).toBe(200);
    const listed = await send('get', `/tasks?search=${encodeURIComponent(theirs.title)}`, reader.auth);
    expect(listed.body.data.map((t: { id: string }) => t.id)).toEqual([theirs.id]);
  });
});

describe('refused input answers 400 problem+json and writes nothing', () => {
  async function expectRefused(body: object, credential: Credential, field: string, code?: string) {
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await create(body, credential);
    expect(res.status, res.text).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.map((e: { location: string }) => e.location)).toContain(`request/body/${field}`);
    if (code) expect(res.body.code).toBe(code);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    return res;
  }

  it('an overlong title or description, a blank title', async () => {
    await expectRefused({ title: 'x'.repeat(201) }, manager, 'title');
    await expectRefused({ title: 'x', description: 'y'.repeat(10_001) }, manager, 'description');
    await expectRefused({ title: '   ' }, manager, 'title', 'validation_failed');
    // Trimmed to 200 characters, it fits.
    expect((await create({ title: ` ${'x'.repeat(200)}` })).status).toBe(400); // the contract counts what is sent
    expect((await create({ title: 'x'.repeat(200) })).status).toBe(201);
  });

  it('attack: bidirectional control characters in a title or description (a title that reads differently than it is)', async () => {
    const res = await expectRefused({ title: 'invoice\u202Etxt.exe' }, manager, 'title', 'validation_failed');
    expect(res.body.errors[0].error_code).toBe('bidi_control');
    await expectRefused({ title: 'ok', description: 'see \u2067hidden\u2069' }, manager, 'description', 'validation_failed');
    await expectRefused({ title: 'tab\tin a title' }, manager, 'title', 'validation_failed');
  });

  it('a title is stored NFC and trimmed', async () => {
    const res = await create({ title: '  E\u0301cole  ' });
    expect(res.body.title).toBe('\u00C9cole');
  });

  it('an unknown, disabled or malformed assignee; the same for PATCH', async () => {
    const disabled = await makeUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    for (const assignee of [randomUUID(), disabled.id]) {
      const res = await expectRefused({ title: 'x', assignee_id: assignee }, manager, 'assignee_id', 'invalid_assignee');
      expect(res.body.errors[0].error_code).toBe('invalid_assignee');
    }
    await expectRefused({ title: 'x', assignee_id: 'me' }, manager, 'assignee_id', 'validation_failed');
    const task = await newTask();
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const res = await send('patch', `/tasks/${task.id}`, manager, { assignee_id: disabled.id, title: 'changed too' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_assignee');
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
  });

  it('unknown fields, read-only fields and values out of the enums', async () => {
    await expectRefused({ title: 'x', completed_at: '2026-01-01T00:00:00Z' }, manager, 'completed_at');
    await expectRefused({ title: 'x', created_by: { type: 'user', id: randomUUID(), label: 'x' } }, manager, 'created_by');
    await expectRefused({ title: 'x', status: 'finished' }, manager, 'status');
    await expectRefused({ title: 'x', due_at: 'tomorrow' }, manager, 'due_at');
  });
});

describe('people and keys that change after the fact', () => {
  it('a disabled assignee stays readable, shown disabled; the task keeps them through other changes', async () => {
    const assignee = await makeUser(database.db);
    const task = await newTask({ assignee_id: assignee.id });
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', assignee.id).execute();
    const read = await send('get', `/tasks/${task.id}`, manager);
    expect(read.status).toBe(200);
    expect(read.body.assignee).toEqual({ id: assignee.id, label: 'Test User', status: 'disabled' });
    const renamed = await send('patch', `/tasks/${task.id}`, manager, { title: 'Still theirs', assignee_id: assignee.id });
    expect(renamed.status).toBe(200);
    expect(renamed.body.assignee.status).toBe('disabled');
  });

  it('a task created by a key later revoked, or by a person later disabled, still reads with its creator', async () => {
    const key = await makeApiKey(database.db, ['tasks.create'], { name: 'Soon revoked' });
    const byKey = (await create({ title: 'by a key' }, { 'x-api-key': key.secret })).body as { id: string };
    await key.service.revoke(OPERATOR, key.id);
    const creator = await person(['tasks.create']);
    const byPerson = (await create({ title: 'by a person' }, creator.auth)).body as { id: string };
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', creator.id).execute();
    expect((await send('get', `/tasks/${byKey.id}`, manager)).body.created_by).toEqual({ type: 'api_key', id: key.id, label: 'Soon revoked' });
    expect((await send('get', `/tasks/${byPerson.id}`, manager)).body.created_by).toMatchObject({ type: 'user', id: creator.id });
  });

  it('the database refuses to delete a user or a key a task points at, rather than leave a dangling id', async () => {
    const assignee = await makeUser(database.db);
    await newTask({ assignee_id: assignee.id });
    await expect(database.db.deleteFrom('users').where('id', '=', assignee.id).execute()).rejects.toThrow(/tasks_assignee_id_fkey/);
    await expect(database.db.deleteFrom('api_keys').where('id', '=', managerKeyId).execute()).rejects.toThrow(/tasks_created_by_api_key_id_fkey/);
  });
});
