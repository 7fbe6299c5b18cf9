// The prepared-statement client (src/db/prepared-statements.ts): parameterised texts become named
// statements, a bounded number of them; a statement whose result columns a migration changed is
// prepared again instead of failing for the connection's life.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestDatabase, type TestDatabase, testPool } from './support/context.js';
import { MAX_NAMED_STATEMENTS, PreparingClient } from '../src/db/prepared-statements.js';

let database: TestDatabase;
let client: PreparingClient;
beforeAll(async () => {
  database = await createTestDatabase();
  client = new PreparingClient({ connectionString: database.url });
  await client.connect();
});
afterAll(async () => {
  await client.end();
  await database.destroy();
});

const preparedOn = async (on: PreparingClient) => ((await on.query('select statement from pg_prepared_statements')) as pg.QueryResult<{ statement: string }>).rows.map((r) => r.statement);

describe('the prepared-statement client', () => {
  it('names a statement with parameters, and leaves one without (transaction control, DDL) to the simple protocol', async () => {
    expect((await client.query('select $1::int + 1 as n', [41])).rows).toEqual([{ n: 42 }]);
    expect((await client.query('select $1::int + 1 as n', [1])).rows).toEqual([{ n: 2 }]);
    await client.query('select 1; select 2'); // two statements in one text: simple protocol only
    expect((await preparedOn(client)).filter((text) => text.includes('$1::int + 1'))).toHaveLength(1);
  });

  it('prepares a statement again when a migration changed the columns it returns, inside a transaction or not', async () => {
    await client.query('create table widened (id int primary key)');
    await client.query('insert into widened values (1)');
    const read = () => client.query('select * from widened where id = $1', [1]);
    expect((await read()).rows).toEqual([{ id: 1 }]);
    await client.query('alter table widened add column label text');
    expect((await read()).rows).toEqual([{ id: 1, label: null }]); // outside a transaction: run again at once

    await client.query('alter table widened add column size int');
    await client.query('begin');
    await expect(read()).rejects.toMatchObject({ code: '0A000' }); // inside one, the transaction fails...
    await client.query('rollback');
    expect((await read()).rows).toEqual([{ id: 1, label: null, size: null }]); // ...and the next use works
  });

  it("names the statements a Pool's own query() runs (the callback form), re-preparing a stale one there too", async () => {
    const pool = testPool({ connectionString: database.url, max: 1, Client: PreparingClient });
    try {
      expect((await pool.query('select $1::int * 2 as n', [21])).rows).toEqual([{ n: 42 }]);
      const prepared = await pool.query<{ statement: string }>('select statement from pg_prepared_statements');
      expect(prepared.rows.map((r) => r.statement)).toContain('select $1::int * 2 as n');
      await pool.query('create table narrowed (id int primary key, note text)');
      await pool.query('insert into narrowed values (1, $1)', ['kept']);
      expect((await pool.query('select * from narrowed where id = $1', [1])).rows).toEqual([{ id: 1, note: 'kept' }]);
      await pool.query('alter table narrowed drop column note');
      expect((await pool.query('select * from narrowed where id = $1', [1])).rows).toEqual([{ id: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("names a statement given as a config object of no name (a fixed statement's array mode), keeping its row mode", async () => {
    const pool = testPool({ connectionString: database.url, max: 1, Client: PreparingClient });
    try {
      const config = { text: 'select $1::int * 3 as n, $1::int as m', values: [7], rowMode: 'array' as const };
      expect((await pool.query(config)).rows).toEqual([[21, 7]]);
      expect((await pool.query(config)).rows).toEqual([[21, 7]]);
      const prepared = await pool.query<{ statement: string }>('select statement from pg_prepared_statements');
      expect(prepared.rows.map((r) => r.statement)).toContain(config.text);
    } finally {
      await pool.end();
    }
  });

  it('leaves a config object with a name of its own, or options it does not know, to pg as it is', async () => {
    const pool = testPool({ connectionString: database.url, max: 1, Client: PreparingClient });
    try {
      expect((await pool.query({ name: 'chosen_by_caller', text: 'select $1::int - 1 as n', values: [8] })).rows).toEqual([{ n: 7 }]);
      const withTypes = { text: 'select $1::int - 2 as n', values: [8], types: { getTypeParser: () => (value: string) => `parsed ${value}` } };
      expect((await pool.query(withTypes)).rows).toEqual([{ n: 'parsed 6' }]);
      const prepared = await pool.query<{ name: string; statement: string }>('select name, statement from pg_prepared_statements');
      expect(prepared.rows).toContainEqual({ name: 'chosen_by_caller', statement: 'select $1::int - 1 as n' });
      expect(prepared.rows.map((r) => r.statement)).not.toContain(withTypes.text);
    } finally {
      await pool.end();
    }
  });

  it('serves Kysely through a pool, in transactions too', async () => {
    const db = new Kysely<{ widened: { id: number } }>({ dialect: new PostgresDialect({ pool: testPool({ connectionString: database.url, max: 2, Client: PreparingClient }) }) });
    try {
      const ids = await db.transaction().execute(async (trx) => {
        await trx.insertInto('widened').values({ id: 2 }).execute();
        return trx.selectFrom('widened').select('id').where('id', '>=', 1).orderBy('id').execute();
      });
      expect(ids).toEqual([{ id: 1 }, { id: 2 }]);
      expect((await sql<{ n: number }>`select ${3}::int as n`.execute(db)).rows).toEqual([{ n: 3 }]);
    } finally {
      await db.destroy();
    }
  });

  // Last: it uses up the names of this process.
  it(`names at most ${MAX_NAMED_STATEMENTS} texts per process; later ones run unnamed`, async () => {
    const fresh = new PreparingClient({ connectionString: database.url });
    await fresh.connect();
    try {
      for (let i = 0; i < MAX_NAMED_STATEMENTS + 20; i++) {
        expect((await fresh.query(`select $1::int + ${i} as n`, [1])).rows).toEqual([{ n: 1 + i }]);
      }
      expect((await preparedOn(fresh)).length).toBeLessThanOrEqual(MAX_NAMED_STATEMENTS);
    } finally {
      await fresh.end();
    }
  });
});
