// GET /tasks for real: every filter, both orders, the signed cursor bound to them, paging that
// neither skips nor repeats a task while others are inserted, and the indexes the statements use.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase, testPool } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { systemClock } from '../src/clock.js';
import { firstPage, laterPage, listTasksPage, titleSearchPage } from '../src/tasks/repository.js';
import { PreparingClient } from '../src/db/prepared-statements.js';
import type { Database } from '../src/db/schema.js';

type App = ReturnType<typeof createTestApp>['app'];
interface Task {
  id: string;
  title: string;
  status: string;
  due_at: string | null;
  assignee_id: string | null;
  created_at: string;
}

let database: TestDatabase;
let app: App;
let key: Record<string, string>;
let keyId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  ({ app } = createTestApp(database.db, { clock: systemClock }));
  const made = await makeApiKey(database.db, ['tasks.list', 'tasks.create']);
  key = { 'x-api-key': made.secret };
  keyId = made.id;
});
afterAll(() => database.destroy());

/** Tasks inserted straight in the table (`tag` in every title), created one millisecond apart in their order unless told. */
async function insertTasks(tag: string, rows: Array<{ title?: string; status?: string; due_at?: string | null; assignee_id?: string | null; created_at?: string }>) {
  const start = Date.now();
  const values = rows.map((row, i) => ({
    title: row.title ?? `${tag} ${i}`,
    status: (row.status ?? 'todo') as 'todo',
    due_at: row.due_at ?? null,
    assignee_id: row.assignee_id ?? null,
    created_by_api_key_id: keyId,
    completed_at: row.status === 'done' ? new Date() : null,
    created_at: row.created_at ?? new Date(start + i).toISOString(),
  }));
  return (await database.db.insertInto('tasks').values(values).returning('id').execute()).map((r) => r.id);
}

async function list(query: string, credential: Record<string, string> = key) {
  // A date-time's colons are reserved characters: a query carries them encoded.
  const res = await request(app).get(`/tasks?${query.replace(/:/g, '%3A')}`).set(credential);
  expectContractResponse(res, 'GET', '/tasks');
  return res;
}

/** Every page of a query, following next_cursor; `between` runs after each page. */
async function walk(query: string, between?: () => Promise<void>): Promise<Task[]> {
  const seen: Task[] = [];
  let cursor: string | null = null;
  do {
    const res = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status, res.text).toBe(200);
    seen.push(...(res.body.data as Task[]));
    cursor = res.body.next_cursor;
    await between?.();
  } while (cursor);
  return seen;
}

const ids = (tasks: Task[]) => tasks.map((t) => t.id);

describe('filters', () => {
  const tag = `filters-${randomUUID().slice(0, 8)}`;
  let ada: { id: string; auth: Record<string, string> };
  let made: Record<string, string>;
  beforeAll(async () => {
    const user = await createUser(database.db, { permissions: ['tasks.list'] });
    ada = { id: user.id, auth: { authorization: `Bearer ${(await signIn(app, user.email, user.password)).access_token}` } };
    const [todo, doing, done, cancelled, mine, dueSoon, dueLater] = await insertTasks(tag, [
      { status: 'todo' },
      { status: 'in_progress' },
      { status: 'done' },
      { status: 'cancelled' },
      { assignee_id: ada.id, due_at: '2027-03-01T00:00:00Z' },
      { due_at: '2027-01-01T00:00:00Z' },
      { due_at: '2027-06-01T00:00:00Z' },
    ]);
    made = { todo: todo!, doing: doing!, done: done!, cancelled: cancelled!, mine: mine!, dueSoon: dueSoon!, dueLater: dueLater! };
  });

  it('status takes one or more values', async () => {
    expect(ids(await walk(`search=${tag}&status=done`))).toEqual([made.done]);
    expect(ids(await walk(`search=${tag}&status=in_progress,cancelled`))).toEqual([made.doing, made.cancelled]);
    expect((await list(`status=finished`)).status).toBe(400);
  });

  it('assignee_id is a user, or me for the signed-in person; an API key asking for me gets 400', async () => {
    expect(ids(await walk(`search=${tag}&assignee_id=${ada.id}`))).toEqual([made.mine]);
    const mine = await list(`search=${tag}&assignee_id=me`, ada.auth);
    expect(ids(mine.body.data)).toEqual([made.mine]);
    const byKey = await list('assignee_id=me');
    expect(byKey.status).toBe(400);
    expect(byKey.body.code).toBe('validation_failed');
    expect(byKey.body.errors).toEqual([expect.objectContaining({ location: 'request/query/assignee_id', error_code: 'me_without_person' })]);
    expect((await list('assignee_id=someone')).status).toBe(400);
  });

  it('due_after is inclusive, due_before exclusive, and both leave out tasks without a due date', async () => {
    expect(ids(await walk(`search=${tag}&due_after=2027-03-01T00:00:00Z`))).toEqual([made.mine, made.dueLater]);
    expect(ids(await walk(`search=${tag}&due_before=2027-03-01T00:00:00Z`))).toEqual([made.dueSoon]);
    expect(ids(await walk(`search=${tag}&due_after=2027-01-01T00:00:00Z&due_before=2027-06-01T00:00:00Z`))).toEqual([made.mine, made.dueSoon]);
  });

  it('sort=due_at: soonest first, tasks without a due date last (by creation, then id)', async () => {
    const all = ids(await walk(`search=${tag}&sort=due_at&limit=2`));
    expect(all.slice(0, 3)).toEqual([made.dueSoon, made.mine, made.dueLater]);
    expect(all.slice(3).sort()).toEqual([made.todo, made.doing, made.done, made.cancelled].sort());
    // No due date: ordered by id among themselves.
    expect(all.slice(3)).toEqual([...all.slice(3)].sort());
  });

  it('search finds the title without regard to case or accents, and treats % and _ as text', async () => {
    const searchTag = `srch${randomUUID().slice(0, 6)}`;
    const [ecole, naive, percent] = await insertTasks(searchTag, [
      { title: `${searchTag} Réunion à l'École Supérieure` },
      { title: `${searchTag} NAÏVE Straße` },
      { title: `${searchTag} 100% done` },
    ]);
    const find = async (text: string) => ids(await walk(`search=${encodeURIComponent(`${searchTag} ${text}`.trim())}`));
    expect(await find('')).toHaveLength(3);
    for (const text of ['reunion a l\'ecole', 'RÉUNION', "REUNION A L'ÉCOLE SUP"]) expect(await find(text), text).toEqual([ecole]);
    expect(await find('naive')).toEqual([naive]);
    expect(ids(await walk(`search=${encodeURIComponent('strasse')}`)).includes(naive!)).toBe(true); // unaccent's ß
    expect(await find('100%')).toEqual([percent]);
    expect(await find('1_0')).toEqual([]);
  });
});

describe('paging', () => {
  it('walks every task exactly once, also tasks created in the same microsecond', async () => {
    const tag = `same-${randomUUID().slice(0, 8)}`;
    const made = await insertTasks(tag, Array.from({ length: 23 }, () => ({ created_at: '2026-01-01T00:00:00.000001Z' })));
    const seen = ids(await walk(`search=${tag}&limit=5`));
    expect(seen).toEqual([...made].sort());
  });

  it('neither skips nor repeats a task while others are inserted between pages, in either order', async () => {
    const tag = `walk-${randomUUID().slice(0, 8)}`;
    const due = (i: number) => (i % 3 === 0 ? null : new Date(Date.UTC(2027, 0, 1 + (i * 7) % 40)).toISOString());
    const before = await insertTasks(tag, Array.from({ length: 40 }, (_, i) => ({ due_at: due(i) })));
    for (const sort of ['created_at', 'due_at']) {
      let n = 0;
      // Each page, three more tasks land: due anywhere in the range, or without a due date.
      const seen = ids(await walk(`search=${tag}&limit=6&sort=${sort}`, async () => {
        await insertTasks(tag, [0, 1, 2].map((k) => ({ title: `${tag} later ${sort} ${n++}`, due_at: due(n + k) })));
      }));
      expect(new Set(seen).size, `${sort}: no task repeated`).toBe(seen.length);
      for (const id of before) expect(seen, `${sort}: every task there from the start is seen`).toContain(id);
    }
  });

  it('the cursor is bound to the filters and the order: another query refuses it with 400 invalid_cursor', async () => {
    const tag = `bound-${randomUUID().slice(0, 8)}`;
    await insertTasks(tag, Array.from({ length: 4 }, () => ({})));
    const cursor: string = (await list(`search=${tag}&limit=2&status=todo`)).body.next_cursor;
    expect((await list(`search=${tag}&limit=2&status=todo&cursor=${cursor}`)).status).toBe(200);
    for (const other of [`search=${tag}`, `search=${tag}&status=done`, `search=${tag}&status=todo&sort=due_at`, `search=${tag}x&status=todo`, `search=${tag}&status=todo&due_before=2030-01-01T00:00:00Z`]) {
      const res = await list(`${other}&limit=2&cursor=${cursor}`);
      expect(res.status, other).toBe(400);
      expect(res.body.code).toBe('invalid_cursor');
    }
    // The same set of statuses in another order is the same query.
    const two: string = (await list(`search=${tag}&limit=2&status=todo,done`)).body.next_cursor;
    expect((await list(`search=${tag}&limit=2&status=done,todo&cursor=${two}`)).status).toBe(200);
  });

  it('defaults to 50 per page and refuses more than 200', async () => {
    await insertTasks(`bulk-${randomUUID().slice(0, 8)}`, Array.from({ length: 60 }, () => ({})));
    const first = await list('');
    expect(first.body.data).toHaveLength(50);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect((await list('limit=201')).status).toBe(400);
  });
});

describe('the statements use the indexes (what keeps them fast on a million tasks)', () => {
  beforeAll(async () => {
    await sql`insert into tasks (title, created_by_api_key_id, due_at, created_at)
      select 'filler task number ' || n, ${keyId}::uuid, case when n % 4 = 0 then null else now() + n * interval '1 minute' end, now() - n * interval '1 second'
      from generate_series(1, 20000) n`.execute(database.db);
    await sql`analyze tasks`.execute(database.db);
  });

  async function plan(text: string, values: unknown[]): Promise<string> {
    const client = await database.pool.connect();
    try {
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`explain ${text}`, values);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    } finally {
      client.release();
    }
  }

  it('a deep page starts from the cursor in the (created_at, id) index', async () => {
    const text = await plan(laterPage.sql, laterPage.parameters({ limit: 51, afterKey: '2026-01-01T00:00:00.000000Z', afterId: randomUUID(), statuses: [], assigneeId: '', dueBefore: '', dueAfter: '', search: '' }));
    expect(text).toMatch(/Index Cond: \(ROW\(created_at, id\) > ROW/);
    expect(text).toContain('tasks_created_at_id_idx');
    expect(text).not.toMatch(/Sort|Hash/);
    expect(firstPage.sql).not.toContain('>');
  });

  it('a title search reads the trigram index of the folded title, not the table', async () => {
    const res = await list(`search=${encodeURIComponent('number 12345')}`);
    expect(ids(res.body.data)).toHaveLength(1);
    // The service's own statement: its pattern is made in SQL from the text (folded, then escaped).
    const text = await plan(titleSearchPage.sql, titleSearchPage.parameters({ limit: 51, afterKey: '', afterId: '', statuses: [], assigneeId: '', dueBefore: '', dueAfter: '', search: 'number 12345' }));
    expect(text).toContain('tasks_title_search_idx');
  });

  it('a title search, run as the service runs it (a named prepared statement, many times), keeps being planned with its text and reads the trigram index', async () => {
    // A generic plan would not know the text and could walk the whole created_at index for a rare one.
    const pool = testPool({ connectionString: database.url, max: 1, Client: PreparingClient });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    try {
      for (let i = 0; i < 12; i++) expect(await listTasksPage(db, { limit: 50, sort: 'created_at', filter: { search: `number ${10000 + i}` } })).toHaveLength(1);
      const { rows } = await pool.query<{ name: string; generic_plans: string }>("select name, generic_plans from pg_prepared_statements where statement like '%fold_for_search%'");
      expect(rows).toHaveLength(1);
      expect(rows[0]!.generic_plans).toBe('0');
      // A text of our own making, so written into the EXPLAIN (which takes no parameters of its own).
      const plan = await pool.query<{ 'QUERY PLAN': string }>(`explain execute ${rows[0]!.name}('rare ${randomUUID()}', 51)`);
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('Bitmap Index Scan on tasks_title_search_idx');
    } finally {
      await db.destroy();
    }
  });
});
