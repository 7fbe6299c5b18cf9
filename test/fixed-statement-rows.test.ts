// Fixed statements on the pool read pg's answer in array mode and make each row with a function of
// the statement's own (src/db/fixed-statement.ts): the rows must be exactly the objects pg's default
// row mode makes, stay right when a migration changes what `select *` returns, and a column whose
// name could not be written into that function as it is must be refused, not mangled.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { fixedStatement } from '../src/db/fixed-statement.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const mixed = fixedStatement(
  (_db, p: { n: number }) =>
    sql<Record<string, unknown>>`
      select ${p.n}::int as n, null::text as nothing, array['a', 'b'] as list, 'x' as first, 'y' as first,
        now() as at, ${p.n}::int8 as big, true as yes, '{"k": 1}'::jsonb as doc`,
);

describe('the rows of a fixed statement on the pool', () => {
  it("are the objects pg's default row mode makes: the same keys in the same order, nulls, arrays, parsed types, a later duplicate winning", async () => {
    const [row] = await mixed.execute(database.db, { n: 7 });
    const [expected] = (await database.pool.query(mixed.sql, mixed.parameters({ n: 7 }))).rows;
    expect(Object.keys(row!)).toEqual(Object.keys(expected));
    expect({ ...row, at: null }).toEqual({ ...expected, at: null });
    expect(row!.at).toBeInstanceOf(Date);
    expect(row).toMatchObject({ n: 7, nothing: null, list: ['a', 'b'], first: 'y', yes: true, doc: { k: 1 } });
    expect(Object.getPrototypeOf(row)).toBe(Object.prototype);
  });

  it('follow a migration that changes the columns `select *` returns', async () => {
    await sql`create table reshaped (id int primary key, note text)`.execute(database.db);
    await sql`insert into reshaped values (1, 'kept')`.execute(database.db);
    const read = fixedStatement((db, p: { id: number }) => db.selectFrom('reshaped' as never).selectAll().where('id' as never, '=', p.id as never));
    expect(await read.execute(database.db, { id: 1 })).toEqual([{ id: 1, note: 'kept' }]);
    await sql`alter table reshaped drop column note, add column size int`.execute(database.db);
    expect(await read.execute(database.db, { id: 1 })).toEqual([{ id: 1, size: null }]);
  });

  it('refuse, as an error of the statement, a column named __proto__ (an attempt to set the rows\' prototype) or a name that is not plain', async () => {
    const proto = fixedStatement((_db, p: { n: number }) => sql`select ${p.n}::int as "__proto__"`);
    await expect(proto.execute(database.db, { n: 1 })).rejects.toThrow(/plain name.*__proto__/);
    const injected = fixedStatement((_db, p: { n: number }) => sql`select ${p.n}::int as "a: (globalThis.injectedByAColumn = 1), b"`);
    await expect(injected.execute(database.db, { n: 1 })).rejects.toThrow(/plain name/);
    expect((globalThis as { injectedByAColumn?: number }).injectedByAColumn).toBeUndefined();
    const unnamed = fixedStatement((_db, p: { n: number }) => sql`select ${p.n}::int + 1`);
    await expect(unnamed.execute(database.db, { n: 1 })).rejects.toThrow(/plain name.*\?column\?/);
  });
});
