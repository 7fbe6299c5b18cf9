// What a benchmark settles before measuring (bench/support/database.ts): the audit events its seeding
// recorded are sealed and what the seeding dirtied is written out before the first measurement, so
// that neither the service's first maintenance step nor a timed checkpoint does it during one; a
// role that may not checkpoint is told so and the benchmark goes on.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../../test/support/context.js';
import { settleBeforeMeasuring } from '../support/database.js';
import { seedUsers } from '../../src/cli/seed.js';
import type { Database } from '../../src/db/schema.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  await sql`create extension if not exists pg_buffercache`.execute(database.db);
  // Nothing but the test writes to it: no autovacuum that could dirty it after the checkpoint.
  await sql`create table seeded (n int) with (autovacuum_enabled = off)`.execute(database.db);
});
afterAll(() => database.destroy());

/** The buffers of the `seeded` table that hold changes not yet written out. */
async function dirtyBuffers(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_buffercache
    where isdirty and reldatabase = (select oid from pg_database where datname = current_database())
      and relfilenode = pg_relation_filenode('seeded')`.execute(database.db);
  return rows[0]!.n;
}

describe('settling a benchmark database before measuring', () => {
  it("seals the seeding's audit events, which the service's first maintenance step would seal in the middle of the run", async () => {
    await seedUsers(database.db, { users: 30, seed: 1 });
    const unsealed = async () => (await sql<{ n: number }>`select count(*)::int as n from security_events where seal_id is null`.execute(database.db)).rows[0]!.n;
    expect(await unsealed()).toBeGreaterThanOrEqual(30);
    await settleBeforeMeasuring(database);
    expect(await unsealed()).toBe(0);
  });

  it('leaves none of what a seeding wrote for a later checkpoint to write, hint bits included', async () => {
    // Other test files create and drop databases beside this one, and each drop checkpoints the
    // whole cluster: seed until the changes are seen dirty, so that the check below can fail.
    let dirty = 0;
    for (let attempt = 0; attempt < 5 && dirty === 0; attempt++) {
      await sql`insert into seeded select generate_series(1, 20000)`.execute(database.db);
      dirty = await dirtyBuffers();
    }
    expect(dirty).toBeGreaterThan(0);
    await settleBeforeMeasuring(database);
    expect(await dirtyBuffers()).toBe(0);
    // The rows' first reading sets their hint bits: that dirties their pages unless settling did it.
    await sql`select count(*) from seeded`.execute(database.db);
    expect(await dirtyBuffers()).toBe(0);
  });

  it('tells a role that may not checkpoint so, and lets the benchmark go on', async () => {
    const role = `bench_no_checkpoint_${randomBytes(4).toString('hex')}`;
    const url = new URL(database.url);
    url.username = role;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    await sql`create role ${sql.id(role)} login`.execute(database.db);
    const written = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      // It may do all the rest: read and seal the audit trail.
      await sql`grant all on all tables in schema public to ${sql.id(role)}`.execute(database.db);
      await sql`grant all on all sequences in schema public to ${sql.id(role)}`.execute(database.db);
      await expect(settleBeforeMeasuring({ db })).resolves.toBeUndefined();
      expect(written.mock.calls.map(([text]) => String(text)).join('')).toMatch(/^could not checkpoint before measuring \(.*\): a timed checkpoint may land in a measurement\n$/);
    } finally {
      written.mockRestore();
      await db.destroy();
      await sql`drop owned by ${sql.id(role)}`.execute(database.db);
      await sql`drop role ${sql.id(role)}`.execute(database.db);
    }
  });
});
