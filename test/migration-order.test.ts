// Engineers add migrations in parallel, each under a timestamp prefix of their own, so a database
// migrated at one state of main may lack a migration whose name sorts before its last applied one
// (a `make run` data directory, a staging database). `migrateToLatest` applies it all the same
// (src/db/migrate.ts), where Kysely's default refuses to start ("corrupted migrations").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Migrator } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { loadMigrations, migrationNames } from '../src/db/migrations/index.js';
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

describe('migrations found by their file names', () => {
  it('finds every migration file of the folder, sorted, and ignores compiled maps and the index', () => {
    const files = ['20270102T1000_invitations.js', 'index.js', '20261121T1200_users.js', '20261121T1200_users.js.map', '20261121T1200_users.d.ts'];
    expect(migrationNames(files, '.js')).toEqual(['20261121T1200_users', '20270102T1000_invitations']);
  });

  it('refuses a migration file whose name would make it skipped, rather than never running it', () => {
    expect(() => migrationNames(['20270102T1000_invitations.ts', '2027-01-03_erasure.ts'], '.ts')).toThrow(/2027-01-03_erasure\.ts is not named/);
    expect(() => migrationNames(['20270103T1000_Erasure.ts'], '.ts')).toThrow(/is not named/);
  });

  it('reads this folder, the first migration among them, in name order', async () => {
    expect(Object.keys(migrations)).toContain('20261121T1200_users');
    expect(Object.keys(migrations)).toEqual([...Object.keys(migrations)].sort());
  });
});
