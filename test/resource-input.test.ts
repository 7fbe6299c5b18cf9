// Tasks and meetings attacked from outside: date-times the contract lets through but no calendar
// holds, malformed Unicode in the text people read, LIKE wildcards smuggled past the search's
// escaping by accent folding, and an id spelt in capitals that the journal recorded as a change.
// Each answer is what the service promises (400 problem+json, nothing written; a search for the
// text as typed; one event per real change), never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { createAppWithTestBearer, makeRole, makeUser, testBearer } from './support/access-fixtures.js';

let database: TestDatabase;
let app: ReturnType<typeof createAppWithTestBearer>['app'];
let tables: string[];
let auth: string;
let taskId: string;
let meetingId: string;

const PERMISSIONS = ['tasks.list', 'tasks.read', 'tasks.create', 'tasks.update', 'meetings.list', 'meetings.create', 'meetings.update', 'roles.create'];

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createAppWithTestBearer(database.db));
  const role = await makeRole(database.db, PERMISSIONS);
  auth = testBearer((await makeUser(database.db, { roleIds: [role.id] })).id);
  tables = await tableNames(database.db);
  taskId = (await send('post', '/tasks', { title: 'Target task', due_at: '2026-12-15T09:00:00Z' })).body.id;
  meetingId = (await send('post', '/meetings', { title: 'Target meeting', starts_at: '2026-12-15T09:00:00Z', ends_at: '2026-12-15T10:00:00Z' })).body.id;
});
afterAll(() => database.destroy());

async function send(method: 'get' | 'post' | 'patch', path: string, body?: object) {
  const req = request(app)[method](path).set('authorization', auth);
  const res = await (body === undefined ? req : req.send(body));
  expectContractResponse(res, method, path);
  return res;
}

/** The request is refused with 400 problem+json naming `location`, and no table changed. */
async function expectRefused(method: 'get' | 'post' | 'patch', path: string, body: object | undefined, location: string) {
  const before = await digestTables(database.db, tables);
  const res = await send(method, path, body);
  expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`).toBe(400);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.errors.map((e: { location: string }) => e.location)).toContain(location);
  expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
}

describe('security: date-times the contract accepts but no calendar holds', () => {
  // Each passes the contract's `format: date-time`; none is an instant the service can store.
  const UNHELD = {
    'a leap second': '2026-12-31T23:59:60Z',
    'an offset of hours only': '2026-12-15T09:00:00+01',
    'year 0000': '0000-01-01T00:00:00Z',
    'past year 9999 once the offset is applied': '9999-12-31T23:30:00-23:00',
  };

  it.each(Object.entries(UNHELD))('%s as a task due date or due filter: 400 naming the field, nothing written', async (_, at) => {
    await expectRefused('post', '/tasks', { title: 'Due then', due_at: at }, 'request/body/due_at');
    await expectRefused('patch', `/tasks/${taskId}`, { due_at: at }, 'request/body/due_at');
    await expectRefused('get', `/tasks?due_before=${encodeURIComponent(at)}`, undefined, 'request/query/due_before');
    await expectRefused('get', `/tasks?due_after=${encodeURIComponent(at)}`, undefined, 'request/query/due_after');
  });

  it.each(Object.entries(UNHELD))('%s as a meeting time or range bound: 400 naming the field, nothing written', async (_, at) => {
    const near = new Date('2026-12-31T23:00:00Z'); // a good value for the other field
    await expectRefused('post', '/meetings', { title: 'Then', starts_at: at, ends_at: new Date(near.getTime() + 3600_000).toISOString() }, 'request/body/starts_at');
    await expectRefused('post', '/meetings', { title: 'Then', starts_at: near.toISOString(), ends_at: at }, 'request/body/ends_at');
    await expectRefused('patch', `/meetings/${meetingId}`, { starts_at: at }, 'request/body/starts_at');
    await expectRefused('patch', `/meetings/${meetingId}`, { ends_at: at }, 'request/body/ends_at');
    await expectRefused('get', `/meetings?from=${encodeURIComponent(at)}&until=${encodeURIComponent(near.toISOString())}`, undefined, 'request/query/from');
    await expectRefused('get', `/meetings?from=${encodeURIComponent(near.toISOString())}&until=${encodeURIComponent(at)}`, undefined, 'request/query/until');
  });

  it('attack: a due filter with an offset past PostgreSQL\'s ±15:59 (+23:00, -16:00), a real RFC 3339 instant, is served as that instant, never a 500', async () => {
    const made = await send('post', '/tasks', { title: 'Due past midnight', due_at: '2026-06-02T00:00:00Z' });
    expect(made.status, made.text).toBe(201);
    // 2026-06-01T23:30Z and 2026-06-02T00:30Z, written with offsets PostgreSQL's timestamptz input refuses.
    for (const [before, after] of [['2026-06-02T22:30:00+23:00', '2026-06-02T23:30:00.000001+23:00'], ['2026-06-01T07:30:00-16:00', '2026-06-01T08:30:00.5-16:00']] as const) {
      const listed = async (filter: string, at: string) => {
        const res = await send('get', `/tasks?${filter}=${encodeURIComponent(at)}&search=${encodeURIComponent('Due past midnight')}`);
        expect(res.status, res.text).toBe(200);
        return res.body.data.map((t: { id: string }) => t.id);
      };
      expect(await listed('due_after', after)).not.toContain(made.body.id);
      expect(await listed('due_before', after)).toContain(made.body.id);
      expect(await listed('due_after', before)).toContain(made.body.id);
      expect(await listed('due_before', before)).not.toContain(made.body.id);
    }
    // To the microsecond, as PostgreSQL keeps the due date: one microsecond after it is after it.
    const exactly = await send('get', `/tasks?due_after=${encodeURIComponent('2026-06-02T23:00:00+23:00')}&search=${encodeURIComponent('Due past midnight')}`);
    expect(exactly.body.data.map((t: { id: string }) => t.id)).toContain(made.body.id);
    const justAfter = await send('get', `/tasks?due_after=${encodeURIComponent('2026-06-02T23:00:00.000001+23:00')}&search=${encodeURIComponent('Due past midnight')}`);
    expect(justAfter.status, justAfter.text).toBe(200);
    expect(justAfter.body.data.map((t: { id: string }) => t.id)).not.toContain(made.body.id);
  });

  it('the spellings of RFC 3339 that name an instant are still served: lower-case t and z, an offset without colon, the last millisecond of 9999', async () => {
    for (const at of ['2026-12-15t09:00:00z', '2026-12-15T10:00:00+0100', '9999-12-31T23:59:59.999Z']) {
      const made = await send('post', '/tasks', { title: `Due ${at}`, due_at: at });
      expect(made.status, made.text).toBe(201);
      const listed = async (filter: string) => {
        const res = await send('get', `/tasks?${filter}=${encodeURIComponent(at)}`);
        expect(res.status, res.text).toBe(200);
        return res.body.data.map((t: { id: string }) => t.id);
      };
      expect(await listed('due_after')).toContain(made.body.id);
      expect(await listed('due_before')).not.toContain(made.body.id);
    }
  });
});

describe('security: a lone surrogate (half of a UTF-16 pair) in text people read', () => {
  it.each([
    ['a task title', 'post', '/tasks', { title: 'Pay \ud800 invoice' }, 'request/body/title'],
    ['a task description', 'post', '/tasks', { title: 'Pay', description: 'half \udc00 pair' }, 'request/body/description'],
    ['a meeting title', 'post', '/meetings', { title: '\udbff', starts_at: '2026-12-16T09:00:00Z', ends_at: '2026-12-16T10:00:00Z' }, 'request/body/title'],
    ['a meeting location', 'post', '/meetings', { title: 'Ok', location: 'Room \ud83d', starts_at: '2026-12-16T09:00:00Z', ends_at: '2026-12-16T10:00:00Z' }, 'request/body/location'],
    ['a role name', 'post', '/roles', { name: 'role \ud800', permissions: [] }, 'request/body/name'],
  ] as const)('in %s: 400 naming the field, nothing written', async (_, method, path, body, location) => {
    await expectRefused(method, path, body, location);
  });

  it('a whole pair (an emoji) is text like any other', async () => {
    const res = await send('post', '/tasks', { title: 'Ship it \ud83d\ude80' });
    expect(res.status, res.text).toBe(201);
    expect(res.body.title).toBe('Ship it 🚀');
  });

  it('a title of 200 emoji is 200 characters, as the contract counts them: accepted; 201 are refused', async () => {
    const rockets = (n: number) => '\u{1F680}'.repeat(n);
    const res = await send('post', '/tasks', { title: rockets(200) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.title).toBe(rockets(200));
    await expectRefused('post', '/tasks', { title: rockets(201) }, 'request/body/title');
  });

  it('attack: 200 characters that NFC makes 400 (U+0958 decomposes) are refused after normalising, not stored past the limit', async () => {
    await expectRefused('post', '/tasks', { title: '\u0958'.repeat(200) }, 'request/body/title');
  });
});

describe('security: LIKE wildcards smuggled into a task search as full-width forms', () => {
  it('％, ＿ and ＼ (which accent folding turns into %, _ and \\) are searched as the text typed, not as wildcards', async () => {
    const tag = `fw${Date.now()}`;
    const plain = (await send('post', '/tasks', { title: `${tag} 100 and more` })).body.id;
    const percent = (await send('post', '/tasks', { title: `${tag} 100% done` })).body.id;
    const backslash = (await send('post', '/tasks', { title: `${tag} C:\\temp` })).body.id;
    const found = async (text: string) => (await send('get', `/tasks?search=${encodeURIComponent(`${tag} ${text}`)}`)).body.data.map((t: { id: string }) => t.id);
    expect(await found('100％')).toEqual([percent]); // folded like the title: ％ is %
    expect(await found('1＿0')).toEqual([]);
    expect(await found('1％')).toEqual([]);
    expect(await found('C:＼temp')).toEqual([backslash]);
    expect((await found('100')).sort()).toEqual([plain, percent].sort());
  });
});

describe('security: the same assignee spelt in capitals', () => {
  it('is no change: no event in the journal, no new version, and the journal never shows an id the database does not hold', async () => {
    const assignee = await makeUser(database.db);
    const made = await send('post', '/tasks', { title: 'Assigned in capitals', assignee_id: assignee.id.toUpperCase() });
    expect(made.status, made.text).toBe(201);
    const events = () => database.db.selectFrom('security_events').select(['type', 'changes']).where('target_id', '=', made.body.id).orderBy('id').execute();
    expect((await events()).map((e) => e.changes?.after)).toEqual([expect.objectContaining({ assignee_id: assignee.id })]);
    const version = async () => (await database.db.selectFrom('tasks').select('version').where('id', '=', made.body.id).executeTakeFirstOrThrow()).version;
    const before = await version();
    const res = await send('patch', `/tasks/${made.body.id}`, { assignee_id: assignee.id.toUpperCase() });
    expect(res.status, res.text).toBe(200);
    expect(res.body.assignee_id).toBe(assignee.id);
    expect(await version()).toBe(before);
    expect((await events()).map((e) => e.type)).toEqual(['task_created']);
  });
});
