// Meetings for real, on PostgreSQL: planning, reading, changing and deleting, the range query
// and its edges, paging while meetings are planned, the permission rule (the permission is the only
// source of a right; no hint of what exists), bad input that writes nothing, disabled people, the
// version the safe writes will build on, and the audit journal.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';

let database: TestDatabase;
let app: ReturnType<typeof createAppWithTestBearer>['app'];
/** A person holding every meetings permission, and a key holding them too. */
let planner: { id: string; auth: string };
let key: { id: string; secret: string };
let tables: string[];

const ALL = ['meetings.list', 'meetings.read', 'meetings.create', 'meetings.update', 'meetings.delete'];

async function person(permissions: string[] = []) {
  const role = await makeRole(database.db, permissions);
  const user = await makeUser(database.db, { roleIds: [role.id] });
  return { id: user.id, auth: testBearer(user.id) };
}

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createAppWithTestBearer(database.db));
  planner = await person(ALL);
  key = await makeApiKey(database.db, ALL, { name: 'calendar-sync' });
  tables = await tableNames(database.db);
});
afterAll(() => database.destroy());

type Credential = { auth: string } | { secret: string };
const credential = (who: Credential): [string, string] => ('auth' in who ? ['authorization', who.auth] : ['x-api-key', who.secret]);

function call(who: Credential, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object, headers: Record<string, string> = {}) {
  const req = request(app)[method](path).set(...credential(who)).set(headers);
  return body === undefined ? req : req.send(body);
}

async function checked(who: Credential, method: 'get' | 'post' | 'patch' | 'delete', path: string, body?: object, headers: Record<string, string> = {}) {
  const res = await call(who, method, path, body, headers);
  expectContractResponse(res, method, path);
  return res;
}

/** A meeting planned through the API by the planner; times as offsets in minutes from `base`. */
async function plan(base: Date, startMinutes: number, minutes: number, extra: Record<string, unknown> = {}) {
  const starts = new Date(base.getTime() + startMinutes * 60_000);
  const ends = new Date(starts.getTime() + minutes * 60_000);
  const res = await checked(planner, 'post', '/meetings', { title: `Meeting ${randomUUID().slice(0, 6)}`, starts_at: starts.toISOString(), ends_at: ends.toISOString(), ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; attendee_ids: string[]; starts_at: string; title: string };
}

const range = (from: Date, until: Date, more = '') => `/meetings?from=${from.toISOString()}&until=${until.toISOString()}${more}`;
const ids = (res: request.Response) => (res.body.data as { id: string }[]).map((m) => m.id);
const version = async (id: string) => (await database.db.selectFrom('meetings').select('version').where('id', '=', id).executeTakeFirstOrThrow()).version;
const eventCount = async () => Number((await sql<{ n: string }>`select count(*) as n from security_events`.execute(database.db)).rows[0]!.n);

describe('planning, reading, changing and deleting a meeting', () => {
  it('plans one as a signed-in person: they organise it and attend it; answers 201 with Location', async () => {
    const guest = await makeUser(database.db);
    const res = await checked(planner, 'post', '/meetings', {
      title: '  Cafe\u0301 planning  ',
      description: 'Agenda:\n\t1. figures',
      starts_at: '2030-01-07T09:00:00Z',
      ends_at: '2030-01-07T10:00:00Z',
      location: 'Room 4',
      attendee_ids: [guest.id],
    });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.location).toBe(`/meetings/${res.body.id}`);
    expect(res.body).toMatchObject({
      title: 'Café planning', // NFC and trimmed
      description: 'Agenda:\n\t1. figures',
      starts_at: '2030-01-07T09:00:00.000Z',
      ends_at: '2030-01-07T10:00:00.000Z',
      location: 'Room 4',
      status: 'scheduled',
      organizer_id: planner.id,
      organizer: { id: planner.id, label: 'Test User', status: 'active' },
      created_by: { type: 'user', id: planner.id, label: 'Test User' },
    });
    expect([...res.body.attendee_ids].sort()).toEqual([guest.id, planner.id].sort());
    expect(res.body.attendees.map((a: { id: string }) => a.id)).toEqual(res.body.attendee_ids);
    const read = await checked(planner, 'get', `/meetings/${res.body.id}`);
    expect(read.body).toEqual(res.body);
  });

  it('plans one with an API key, which must name the organizer; created_by is the key', async () => {
    const organizer = await makeUser(database.db);
    const refused = await checked(key, 'post', '/meetings', { title: 'No organizer', starts_at: '2030-01-08T09:00:00Z', ends_at: '2030-01-08T10:00:00Z' });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].location).toBe('request/body/organizer_id');
    const res = await checked(key, 'post', '/meetings', { title: 'Sync', starts_at: '2030-01-08T09:00:00Z', ends_at: '2030-01-08T10:00:00Z', organizer_id: organizer.id });
    expect(res.status, res.text).toBe(201);
    expect(res.body.created_by).toEqual({ type: 'api_key', id: key.id, label: 'calendar-sync' });
    expect(res.body.attendee_ids).toEqual([organizer.id]);
  });

  it('changes fields, clears optional ones with null, replaces the attendees, and bumps the version each time', async () => {
    const [a, b] = [await makeUser(database.db), await makeUser(database.db)];
    const m = await plan(new Date('2030-01-09T09:00:00Z'), 0, 60, { location: 'Room 1', description: 'Old', attendee_ids: [a.id] });
    expect(await version(m.id)).toBe(1);
    const changed = await checked(key, 'patch', `/meetings/${m.id}`, { location: null, description: null, title: 'Renamed', status: 'cancelled' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.body).toMatchObject({ location: null, description: null, title: 'Renamed', status: 'cancelled' });
    expect(await version(m.id)).toBe(2);
    const people = await checked(key, 'patch', `/meetings/${m.id}`, { attendee_ids: [b.id] });
    expect([...people.body.attendee_ids].sort()).toEqual([b.id, planner.id].sort()); // the organizer stays
    expect(await version(m.id)).toBe(3);
    // Sending back what it is changes nothing: no version, no event.
    const events = await eventCount();
    const same = await checked(key, 'patch', `/meetings/${m.id}`, { attendee_ids: people.body.attendee_ids, title: 'Renamed' });
    expect(same.status).toBe(200);
    expect(await version(m.id)).toBe(3);
    expect(await eventCount()).toBe(events);
    // Moving it moves the attendees' copy of its times (the person's index) too.
    await checked(key, 'patch', `/meetings/${m.id}`, { starts_at: '2030-01-10T09:00:00Z', ends_at: '2030-01-10T09:30:00Z' });
    const copies = await database.db.selectFrom('meeting_attendees').select(['starts_at', 'ends_at']).where('meeting_id', '=', m.id).execute();
    for (const c of copies) expect([c.starts_at.toISOString(), c.ends_at.toISOString()]).toEqual(['2030-01-10T09:00:00.000Z', '2030-01-10T09:30:00.000Z']);
    expect(await version(m.id)).toBe(4);
  });

  it('a new organizer joins the attendees; the former one stays unless the set says otherwise', async () => {
    const next = await makeUser(database.db);
    const m = await plan(new Date('2030-01-11T09:00:00Z'), 0, 30);
    const res = await checked(planner, 'patch', `/meetings/${m.id}`, { organizer_id: next.id });
    expect(res.body.organizer_id).toBe(next.id);
    expect([...res.body.attendee_ids].sort()).toEqual([next.id, planner.id].sort());
  });

  it('deletes with 204, its attendees with it; then it is 404', async () => {
    const m = await plan(new Date('2030-01-12T09:00:00Z'), 0, 30);
    const res = await checked(key, 'delete', `/meetings/${m.id}`);
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await database.db.selectFrom('meeting_attendees').select('user_id').where('meeting_id', '=', m.id).execute()).toEqual([]);
    expect((await checked(key, 'get', `/meetings/${m.id}`)).status).toBe(404);
    expect((await checked(key, 'delete', `/meetings/${m.id}`)).status).toBe(404);
  });

  it('is served under the French path /reunions, in every key style', async () => {
    const m = await plan(new Date('2030-01-13T09:00:00Z'), 0, 30);
    const read = await call(key, 'get', `/reunions/${m.id}`, undefined, { 'x-api-inflection': 'camel' });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id: m.id, startsAt: m.starts_at, organizerId: planner.id, createdBy: { type: 'user' } });
    const made = await call(planner, 'post', '/reunions', { Title: 'Pascal', StartsAt: '2030-01-13T11:00:00Z', EndsAt: '2030-01-13T12:00:00Z' }, { 'x-api-inflection': 'pascal' });
    expect(made.status, made.text).toBe(201);
    expect(made.body).toMatchObject({ Title: 'Pascal', AttendeeIds: [planner.id] });
    const dashed = await call(planner, 'patch', `/reunions/${made.body.Id}`, { 'ends-at': '2030-01-13T12:30:00Z' }, { 'x-api-inflection': 'dash' });
    expect(dashed.body).toMatchObject({ 'ends-at': '2030-01-13T12:30:00.000Z' });
    const page = await call(planner, 'get', range(new Date('2030-01-13T00:00:00Z'), new Date('2030-01-14T00:00:00Z')).replace('/meetings', '/reunions'), undefined, { 'x-api-inflection': 'camel' });
    expect(page.body.data.map((x: { id: string }) => x.id)).toEqual([m.id, made.body.Id]);
    expect(page.body).toHaveProperty('nextCursor', null);
  });
});

describe('GET /meetings: the meetings overlapping [from, until)', () => {
  const day = new Date('2031-03-02T00:00:00Z');
  const until = new Date('2031-03-03T00:00:00Z');
  let inside: string[];
  beforeAll(async () => {
    const endsAtFrom = await plan(day, -60, 60); // touches the range's start: outside
    const startsAtUntil = await plan(until, 0, 60); // touches its end: outside
    const fromYesterday = await plan(day, -23 * 60, 24 * 60); // starts 23 h before, ends 1 h in
    const crossing = await plan(day, -30, 60); // ends 30 min in
    const lunch = await plan(day, 12 * 60, 60);
    const late = await plan(until, -30, 60); // starts 30 min before the end
    const wholeRange = await plan(day, 0, 24 * 60); // the whole range exactly
    expect([endsAtFrom, startsAtUntil].every((m) => m.id)).toBe(true);
    inside = [fromYesterday, crossing, wholeRange, lunch, late].map((m) => m.id);
  });

  it('lists exactly the overlapping meetings, by start then id; touching ranges do not overlap', async () => {
    const res = await checked(key, 'get', range(day, until));
    expect(res.status, res.text).toBe(200);
    expect(ids(res)).toEqual(inside);
    expect(res.body.next_cursor).toBeNull();
  });

  it('a meeting spanning the whole range is found by a range inside it', async () => {
    const res = await checked(key, 'get', range(new Date('2031-03-02T11:00:00Z'), new Date('2031-03-02T11:01:00Z')));
    expect(ids(res)).toEqual([inside[2]]);
  });

  it('refuses a range that is empty, longer than 92 days, or missing, with 400 naming the parameter', async () => {
    const cases: [string, string][] = [
      [range(until, day), 'request/query/until'],
      [range(day, day), 'request/query/until'],
      [range(day, new Date(day.getTime() + 92 * 86400_000 + 1000)), 'request/query/until'],
      [`/meetings?from=${day.toISOString()}`, 'request/query/until'],
      [`/meetings?until=${day.toISOString()}`, 'request/query/from'],
      [`/meetings?from=yesterday&until=${day.toISOString()}`, 'request/query/from'],
    ];
    for (const [path, location] of cases) {
      const res = await checked(key, 'get', path);
      expect(res.status, path).toBe(400);
      expect(res.body.errors.map((e: { location: string }) => e.location), path).toContain(location);
    }
    expect((await checked(key, 'get', range(day, new Date(day.getTime() + 92 * 86400_000)))).status).toBe(200);
  });

  it('one person: the meetings they attend or organise; `me` is the signed-in person; an API key is nobody (400)', async () => {
    const guest = await person(['meetings.list']);
    const attends = await plan(day, 9 * 60, 30, { attendee_ids: [guest.id] });
    const organises = await plan(day, 10 * 60, 30, { organizer_id: guest.id });
    await plan(day, 11 * 60, 30); // not theirs
    const expected = [attends.id, organises.id];
    expect(ids(await checked(key, 'get', range(day, until, `&attendee_id=${guest.id}`)))).toEqual(expected);
    expect(ids(await checked(key, 'get', range(day, until, `&attendee_id=${guest.id.toUpperCase()}`)))).toEqual(expected);
    expect(ids(await checked(guest, 'get', range(day, until, '&attendee_id=me')))).toEqual(expected);
    const keyMe = await checked(key, 'get', range(day, until, '&attendee_id=me'));
    expect(keyMe.status).toBe(400);
    expect(keyMe.body.errors[0]).toMatchObject({ location: 'request/query/attendee_id', error_code: 'me_without_person' });
    // Edges hold for one person as for everyone.
    const touching = await plan(day, -30, 30, { attendee_ids: [guest.id] });
    const spanning = await plan(day, 0, 24 * 60, { attendee_ids: [guest.id] });
    const page = ids(await checked(key, 'get', range(day, until, `&attendee_id=${guest.id}`)));
    expect(page).not.toContain(touching.id);
    expect(page).toEqual([spanning.id, ...expected]);
  });

  it('pages without skipping or repeating a meeting while meetings are planned between pages', async () => {
    const from = new Date('2032-05-03T00:00:00Z');
    const to = new Date('2032-05-10T00:00:00Z');
    const planned: string[] = [];
    for (let i = 0; i < 12; i++) planned.push((await plan(from, (i % 4) * 600, 60)).id); // 3 share each start: ordered by id
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await checked(key, 'get', range(from, to, `&limit=5${cursor ? `&cursor=${cursor}` : ''}`));
      expect(res.status, res.text).toBe(200);
      seen.push(...ids(res));
      cursor = res.body.next_cursor;
      pages++;
      // Planned while the walk goes on: one before the cursor (never shown), one after (shown once).
      await plan(from, -120 + pages, 30, {});
      planned.push((await plan(from, 5000 + pages, 30)).id);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const all = ids(await checked(key, 'get', range(from, to, '&limit=200')));
    const expectedSeen = all.filter((id) => planned.includes(id) && seen.includes(id));
    expect(seen.filter((id) => planned.includes(id))).toEqual(expectedSeen);
    for (const id of planned.slice(0, 12)) expect(seen).toContain(id);
    expect(pages).toBeGreaterThan(2);
  });

  it('refuses a cursor made for another range or person, or altered, with 400 invalid_cursor', async () => {
    const res = await checked(key, 'get', range(day, until, '&limit=1'));
    const cursor = res.body.next_cursor as string;
    expect(cursor).toEqual(expect.any(String));
    for (const path of [
      range(day, new Date(until.getTime() + 1000), `&limit=1&cursor=${cursor}`),
      range(day, until, `&limit=1&attendee_id=${planner.id}&cursor=${cursor}`),
      range(day, until, `&limit=1&cursor=${cursor.slice(0, -2)}xx`),
    ]) {
      const refused = await checked(key, 'get', path);
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe('invalid_cursor');
    }
    expect((await checked(key, 'get', range(day, until, `&limit=3&cursor=${cursor}`))).status).toBe(200); // limit may change
  });
});

describe('bad input: 400 problem+json naming the field, nothing written', () => {
  async function expectRefused(who: Credential, method: 'post' | 'patch', path: string, body: object, location: string) {
    const before = await digestTables(database.db, tables);
    const events = await eventCount();
    const res = await checked(who, method, path, body);
    expect(res.status, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.errors.map((e: { location: string }) => e.location), res.text).toContain(location);
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    expect(await eventCount()).toBe(events);
  }
  const valid = { title: 'Valid', starts_at: '2033-01-03T09:00:00Z', ends_at: '2033-01-03T10:00:00Z' };

  it('on planning', async () => {
    const disabled = await makeUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    const active = await makeUser(database.db);
    const many = Array.from({ length: 101 }, () => randomUUID());
    const cases: [object, string][] = [
      [{ ...valid, attendee_ids: [randomUUID()] }, 'request/body/attendee_ids'],
      [{ ...valid, attendee_ids: [active.id, disabled.id] }, 'request/body/attendee_ids'],
      [{ ...valid, attendee_ids: [active.id, active.id] }, 'request/body/attendee_ids'],
      [{ ...valid, attendee_ids: many }, 'request/body/attendee_ids'],
      [{ ...valid, organizer_id: disabled.id }, 'request/body/organizer_id'],
      [{ ...valid, organizer_id: randomUUID() }, 'request/body/organizer_id'],
      [{ ...valid, ends_at: '2033-01-03T08:59:59Z' }, 'request/body/ends_at'],
      [{ ...valid, ends_at: valid.starts_at }, 'request/body/ends_at'],
      [{ ...valid, ends_at: '2033-01-04T09:00:01Z' }, 'request/body/ends_at'],
      [{ ...valid, title: 'x'.repeat(201) }, 'request/body/title'],
      [{ ...valid, title: '   ' }, 'request/body/title'],
      [{ ...valid, title: 'invoice\u202Egpj.exe' }, 'request/body/title'],
      [{ ...valid, description: 'x'.repeat(10_001) }, 'request/body/description'],
      [{ ...valid, location: 'line\nbreak' }, 'request/body/location'],
      [{ ...valid, status: 'postponed' }, 'request/body/status'],
      [{ ...valid, color: 'red' }, 'request/body/color'],
    ];
    for (const [body, location] of cases) await expectRefused(planner, 'post', '/meetings', body, location);
    // 100 distinct active people are accepted (the limit itself).
    const hundred = await Promise.all(Array.from({ length: 100 }, () => makeUser(database.db)));
    const res = await checked(planner, 'post', '/meetings', { ...valid, attendee_ids: hundred.map((u) => u.id) });
    expect(res.status, res.text).toBe(201);
    expect(res.body.attendee_ids).toHaveLength(101); // and the organizer
  });

  it('on changing', async () => {
    const m = await plan(new Date('2033-02-01T09:00:00Z'), 0, 60);
    const disabled = await makeUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    const cases: [object, string][] = [
      [{ ends_at: '2033-02-01T08:00:00Z' }, 'request/body/ends_at'],
      [{ starts_at: '2033-02-01T11:00:00Z' }, 'request/body/starts_at'],
      [{ starts_at: '2033-01-31T09:00:00Z' }, 'request/body/starts_at'],
      [{ attendee_ids: [disabled.id] }, 'request/body/attendee_ids'],
      [{ attendee_ids: [randomUUID()] }, 'request/body/attendee_ids'],
      [{ organizer_id: disabled.id }, 'request/body/organizer_id'],
      [{ title: null }, 'request/body/title'],
      [{ title: 'ok', location: '' }, 'request/body/location'],
      [{}, 'request/body'],
    ];
    for (const [body, location] of cases) await expectRefused(planner, 'patch', `/meetings/${m.id}`, body, location);
  });
});

describe('people disabled after being planned', () => {
  it('leave their meetings readable, shown disabled, and may stay in them when the meeting changes', async () => {
    const [organizer, guest, other] = [await makeUser(database.db), await makeUser(database.db), await makeUser(database.db)];
    const m = await checked(key, 'post', '/meetings', { title: 'Before leaving', starts_at: '2034-01-02T09:00:00Z', ends_at: '2034-01-02T10:00:00Z', organizer_id: organizer.id, attendee_ids: [guest.id] });
    // Disabled the way the back office does it: DELETE /users/{id}.
    const disabler = await makeApiKey(database.db, ['users.disable']);
    for (const id of [organizer.id, guest.id]) expect((await request(app).delete(`/users/${id}`).set('x-api-key', disabler.secret)).status).toBe(200);
    const read = await checked(key, 'get', `/meetings/${m.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.organizer).toMatchObject({ id: organizer.id, status: 'disabled' });
    expect(read.body.attendees.find((a: { id: string }) => a.id === guest.id)).toMatchObject({ status: 'disabled' });
    const listed = await checked(key, 'get', `/meetings?from=2034-01-02T00:00:00Z&until=2034-01-03T00:00:00Z&attendee_id=${guest.id}`);
    expect(ids(listed)).toEqual([m.body.id]);
    const changed = await checked(key, 'patch', `/meetings/${m.body.id}`, { attendee_ids: [guest.id, other.id], title: 'Still on' });
    expect(changed.status, changed.text).toBe(200);
  });
});

describe('the permission is the only source of a right (for keys and people alike)', () => {
  it('an organizer without meetings.update cannot change their own meeting, nor delete it without meetings.delete', async () => {
    const organizer = await person(['meetings.create', 'meetings.read']);
    const made = await checked(organizer, 'post', '/meetings', { title: 'Mine', starts_at: '2035-01-02T09:00:00Z', ends_at: '2035-01-02T10:00:00Z' });
    expect(made.status).toBe(201);
    const patch = await checked(organizer, 'patch', `/meetings/${made.body.id}`, { title: 'Still mine?' });
    expect(patch.status).toBe(403);
    expect(patch.body).toMatchObject({ code: 'permission_denied', required_permission: 'meetings.update' });
    const del = await checked(organizer, 'delete', `/meetings/${made.body.id}`);
    expect(del.body).toMatchObject({ code: 'permission_denied', required_permission: 'meetings.delete' });
    expect((await checked(organizer, 'get', `/meetings/${made.body.id}`)).body.title).toBe('Mine');
  });

  it('meetings are visible organisation-wide to holders of meetings.read and meetings.list', async () => {
    const m = await plan(new Date('2035-01-03T09:00:00Z'), 0, 30);
    const stranger = await person(['meetings.read', 'meetings.list']);
    expect((await checked(stranger, 'get', `/meetings/${m.id}`)).status).toBe(200);
    expect(ids(await checked(stranger, 'get', '/meetings?from=2035-01-03T00:00:00Z&until=2035-01-04T00:00:00Z'))).toContain(m.id);
  });

  const operations: { method: 'get' | 'patch' | 'delete'; permission: string; body?: object }[] = [
    { method: 'get', permission: 'meetings.read' },
    { method: 'patch', permission: 'meetings.update', body: { title: 'Taken over' } },
    { method: 'delete', permission: 'meetings.delete' },
  ];

  it.each(operations)('BOLA probe ($method): without $permission, an existing and an unknown id get the same 403 naming it', async ({ method, permission, body }) => {
    const m = await plan(new Date('2035-01-04T09:00:00Z'), 0, 30);
    const others = ALL.filter((p) => p !== permission);
    for (const caller of [await person(others), { secret: (await makeApiKey(database.db, others)).secret }]) {
      const answers = [];
      for (const id of [m.id, randomUUID(), 'not-a-uuid']) {
        const res = await checked(caller, method, `/meetings/${id}`, body);
        expect(res.status).toBe(403);
        answers.push({ code: res.body.code, required: res.body.required_permission, detail: res.body.detail });
      }
      expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
      expect(answers[0]).toMatchObject({ code: 'permission_denied', required: permission });
    }
    expect((await checked(key, 'get', `/meetings/${m.id}`)).body.title).toBe(m.title);
  });

  it.each(operations)('BOLA probe ($method): a holder gets the same 404 for an unknown id, a malformed one, and a user\u2019s or key\u2019s id', async ({ method, body }) => {
    const user = await makeUser(database.db);
    const answers = [];
    for (const id of [randomUUID(), 'not-a-uuid', '1', "1' or '1'='1", user.id, key.id, randomUUID().toUpperCase()]) {
      for (const caller of [planner, key]) {
        const res = await checked(caller, method, `/meetings/${encodeURIComponent(id)}`, body);
        expect(res.status, `${id}: ${res.text}`).toBe(404);
        answers.push(JSON.stringify({ code: res.body.code, detail: res.body.detail, title: res.body.title }));
      }
    }
    expect(new Set(answers).size).toBe(1);
  });
});

describe('the audit journal', () => {
  it('records who planned, changed and deleted a meeting, with the fields before and after, in the change\u2019s transaction', async () => {
    const guest = await makeUser(database.db);
    const m = await plan(new Date('2036-01-02T09:00:00Z'), 0, 60, { attendee_ids: [guest.id] });
    const last = (type: string) => database.db.selectFrom('security_events').selectAll().where('type', '=', type).where('target_id', '=', m.id).executeTakeFirstOrThrow();
    const created = await last('meeting_created');
    expect(created).toMatchObject({ actor_type: 'user', actor_id: planner.id, target_type: 'meeting', target_label: m.title });
    expect(created.changes).toEqual({
      before: null,
      after: {
        title: m.title,
        description: null,
        starts_at: '2036-01-02T09:00:00.000Z',
        ends_at: '2036-01-02T10:00:00.000Z',
        location: null,
        status: 'scheduled',
        organizer_id: planner.id,
        attendee_ids: [guest.id, planner.id].sort(),
      },
    });
    await checked(key, 'patch', `/meetings/${m.id}`, { status: 'cancelled', attendee_ids: [] });
    const updated = await last('meeting_updated');
    expect(updated).toMatchObject({ actor_type: 'api_key', actor_id: key.id });
    expect(updated.changes).toEqual({ before: { status: 'scheduled', attendee_ids: [guest.id, planner.id].sort() }, after: { status: 'cancelled', attendee_ids: [planner.id] } });
    await checked(key, 'delete', `/meetings/${m.id}`);
    const deleted = await last('meeting_deleted');
    expect(deleted.changes).toMatchObject({ before: { title: m.title, status: 'cancelled' }, after: null });
    // The journal's reading endpoint shows them too.
    const audit = await makeApiKey(database.db, ['audit.read']);
    const res = await request(app).get(`/audit-events?target_id=${m.id}`).set('x-api-key', audit.secret);
    expectContractResponse(res, 'get', '/audit-events');
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual(['meeting_deleted', 'meeting_updated', 'meeting_created']);
  });
});
