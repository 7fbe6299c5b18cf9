// Engineers add migrations in parallel, each under a timestamp prefix of their own, so a database
// migrated at one state of main may lack a migration whose name sorts before its last applied one
// (a `make run` data directory, a staging database). `migrateToLatest` applies it all the same
// (src/db/migrate.ts), where Kysely's default refuses to start ("corrupted migrations").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { loadMigrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { budget } from './support/budgets.js';

const migrations = await loadMigrations();

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
});
afterAll(() => database.destroy());

describe('migrations merged out of order', () => {
  it('a database that lacks a migration sorting before its last applied one gets it at the next start', { timeout: budget({ pgliteStart: 1 }) }, async () => {
    const names = Object.keys(migrations).sort();
    // The last but one is missing: it landed on main after the last one had been applied here.
    const missing = names.at(-2)!;
    const without = Object.fromEntries(Object.entries(migrations).filter(([name]) => name !== missing));
    const { error } = await new Migrator({ db: database.db, provider: { getMigrations: async () => without } }).migrateToLatest();
    expect(error).toBeUndefined();

    expect(await migrateToLatest(database.db)).toEqual([missing]);
    expect(await migrateToLatest(database.db)).toEqual([]);
  });
});
