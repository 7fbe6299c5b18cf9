// The tail of GET /users under load: when a busy API key's or session's last use comes due (once
// a minute), every request already in flight on it reads it as stale; if each sent the UPDATE, each
// would hold a pooled connection while it waited for the row's lock, and the requests behind them
// would wait for a connection. So one process sends one UPDATE per credential per minute.
// Counted on the real PostgreSQL by a statement-level trigger (it fires even when no row changes).
import request from 'supertest';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { ManualClock } from '../src/clock.js';
import { useNotes } from '../src/auth/use-notes.js';

const IN_FLIGHT = 20;
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await sql`create table update_statements (tbl text not null)`.execute(database.db);
  await sql`create function count_update() returns trigger language plpgsql as $$ begin insert into update_statements values (tg_table_name); return null; end $$`.execute(database.db);
  for (const table of ['api_keys', 'sessions']) {
    await sql`create trigger ${sql.raw(`count_${table}`)} after update on ${sql.table(table)} for each statement execute function count_update()`.execute(database.db);
  }
});
afterAll(() => database.destroy());

/**
 * The UPDATE statements run on `table` so far, once the last use of `at` is noted on the row of
 * `id`: the request does not wait for its note, so the test waits for it (as long as a busy machine
 * may take), then a moment more for any other note in flight to land and be counted.
 */
async function updatesOf(table: 'api_keys' | 'sessions', id: string, at: Date): Promise<number> {
  await vi.waitFor(
    async () => {
      const row = await database.db.selectFrom(table).select('last_used_at').where('id', '=', id).executeTakeFirstOrThrow();
      expect(row.last_used_at?.getTime()).toBe(at.getTime());
    },
    { timeout: 20_000, interval: 20 },
  );
  await new Promise((r) => setTimeout(r, 200));
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from update_statements where tbl = ${table}`.execute(database.db);
  return rows[0]!.n;
}

describe('a credential coming due under load', () => {
  it(`sends one last-use UPDATE for ${IN_FLIGHT} requests in flight on a stale API key, not one each`, async () => {
    const clock = new ManualClock(new Date());
    const { app } = createTestApp(database.db, { clock });
    const key = await makeApiKey(database.db, ['users.list'], { clock });
    expect((await request(app).get('/users').set('x-api-key', key.secret)).status).toBe(200);
    const before = await updatesOf('api_keys', key.id, clock.now());
    clock.advance(61_000);
    const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, () => request(app).get('/users').set('x-api-key', key.secret)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect((await updatesOf('api_keys', key.id, clock.now())) - before).toBe(1); // still noted, once
  });

  it(`sends one touch for ${IN_FLIGHT} requests in flight on a stale session`, async () => {
    const clock = new ManualClock(new Date());
    const { app } = createTestApp(database.db, { clock });
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    const session = await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).executeTakeFirstOrThrow();
    const before = await updatesOf('sessions', session.id, clock.now());
    clock.advance(61_000);
    const answers = await Promise.all(Array.from({ length: IN_FLIGHT }, () => request(app).get('/users').set('authorization', `Bearer ${set.access_token}`)));
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect((await updatesOf('sessions', session.id, clock.now())) - before).toBe(1);
  });

  it('notes a credential again once the interval has passed, and each credential apart', () => {
    const noteNow = useNotes(60_000);
    expect(noteNow('a', 0)).toBe(true);
    expect(noteNow('a', 59_999)).toBe(false);
    expect(noteNow('b', 59_999)).toBe(true);
    expect(noteNow('a', 60_000)).toBe(true);
  });
});
