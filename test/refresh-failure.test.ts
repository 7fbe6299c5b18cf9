// A refresh whose transaction fails half-way (a fault injected by a trigger that raises once, on a
// table the refresh writes after it has already inserted the new token set and used up the old
// refresh token) leaves the old refresh token usable: the same refresh then succeeds, and the
// session advances exactly one generation.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, refresh, signIn } from './support/sessions.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  // nextval() is outside transactions: the first matching write raises, every later one passes.
  await sql`create sequence injected_fault_count`.execute(database.db);
  await sql`
    create function raise_once() returns trigger language plpgsql as $$
    begin
      if nextval('injected_fault_count') = 1 then raise exception 'injected fault half-way through a refresh'; end if;
      return new;
    end $$`.execute(database.db);
});
afterAll(() => database.destroy());

/** The writes a refresh makes after the new token set is inserted and the old refresh token marked used. */
const LATE_WRITES = [
  { table: 'sessions', trigger: sql`before update of generation on sessions for each row` },
  { table: 'security_events', trigger: sql`before insert on security_events for each row when (new.type = 'tokens_refreshed')` },
];

describe('a refresh that fails half-way', () => {
  for (const late of LATE_WRITES) {
    // A user made with a password and two sign-ins' worth of hashing.
    it(`keeps the old refresh token usable when writing ${late.table} fails, then advances the session once`, { timeout: budget({ passwordHash: 3 }) }, async () => {
      const { app, logs } = createTestApp(database.db);
      const user = await createUser(database.db);
      const set = await signIn(app, user.email, user.password);
      const session = () => database.db.selectFrom('sessions').select(['id', 'generation']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
      const tokenSets = async () => (await database.db.selectFrom('session_tokens').select('generation').where('session_id', '=', (await session()).id).execute()).length;
      const before = await session();

      await sql`alter sequence injected_fault_count restart with 1`.execute(database.db);
      await sql`create trigger injected_fault ${late.trigger} execute function raise_once()`.execute(database.db);
      try {
        const failed = await refresh(app, set);
        expect(failed.status).toBe(500);
        expect(failed.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(failed.text).not.toContain('injected fault');
        expect(logs.text()).toContain('injected fault'); // the fault did strike
        // Nothing of the failed refresh stayed: same generation, one token set, the old token not used up.
        expect(await session()).toEqual(before);
        expect(await tokenSets()).toBe(1);
        expect((await request(app).get('/me').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);

        const retried = await refresh(app, set);
        expect(retried.status).toBe(201);
        expect((await session()).generation).toBe(before.generation + 1);
        expect(await tokenSets()).toBe(2);
        expect((await request(app).get('/me').set('authorization', `Bearer ${retried.body.access_token}`)).status).toBe(200);
        // Within the grace window the same refresh answers the same set: still one generation on.
        const replayed = await refresh(app, set);
        expect(replayed.status).toBe(201);
        expect(replayed.body).toEqual(retried.body);
        expect((await session()).generation).toBe(before.generation + 1);
      } finally {
        await sql`drop trigger injected_fault on ${sql.table(late.table)}`.execute(database.db);
      }
    });
  }
});
