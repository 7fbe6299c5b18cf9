// The rule "no request holds a database connection while asking for another" is checked in every
// test file (test/support/one-connection.ts): here, that the check sees a breach and only a breach.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { takeBreaches } from './support/one-connection.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const one = (db: TestDatabase['db']) => sql<{ one: number }>`select 1 as one`.execute(db);

describe('the one-connection rule', () => {
  it('a transaction that reads through the pool instead of itself is a breach, with the stack of the read', async () => {
    await database.db.transaction().execute(async (trx) => {
      await one(trx);
      await one(database.db); // on the embedded database (one connection) this waits for itself
    });
    const breaches = takeBreaches();
    expect(breaches).toHaveLength(1);
    expect(breaches[0]).toContain('one-connection-rule.test.ts');
  });

  it('the same through db.connection(), and a raw pool query inside a transaction', async () => {
    await database.db.connection().execute(async (conn) => {
      await one(conn);
      await one(database.db);
    });
    await database.db.transaction().execute(async () => {
      await database.pool.query('select 1');
    });
    expect(takeBreaches()).toHaveLength(2);
  });

  it('work on the transaction, reads side by side, and one after another are not', async () => {
    await database.db.transaction().execute(async (trx) => {
      await Promise.all([one(trx), one(trx)]);
    });
    await Promise.all([one(database.db), one(database.db), database.db.transaction().execute((trx) => one(trx))]);
    await one(database.db);
    await database.db.transaction().execute((trx) => one(trx));
    // Started inside a transaction, awaited after it ended: it no longer holds anything.
    let ended!: () => void;
    const gate = new Promise<void>((resolve) => (ended = resolve));
    let later: Promise<unknown> | undefined;
    await database.db.transaction().execute(async (trx) => {
      await one(trx);
      later = gate.then(() => one(database.db));
    });
    ended();
    await later;
    expect(takeBreaches()).toEqual([]);
  });
});
