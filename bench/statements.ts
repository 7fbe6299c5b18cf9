// What each hot-path statement costs PostgreSQL: the service's own statements (their compiled
// text), run one after another on one connection BENCH_STATEMENT_RUNS times each, named
// (prepared, as the service runs them by default) and unnamed (DB_PREPARED_STATEMENTS=false), with
// the CPU the connection's backend process used meanwhile; then PostgreSQL's own timing of one
// execution (EXPLAIN ANALYZE of the prepared statement, after the runs).
// The key lookup is the reference: the bearer path's session statement should cost no more.
import pg from 'pg';
import { sql } from 'kysely';
import { apiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';
import { keyBySecretDigest } from '../src/api-keys/repository.js';
import { bearerSession } from '../src/sessions/repository.js';
import { firstPage } from '../src/users/repository.js';
import { digestSecret } from '../src/auth/secrets.js';
import { seedUsers } from '../src/cli/seed.js';
import { ACCESS_TOKEN_TTL_S } from '../src/sessions/tokens.js';
import type { FixedStatement } from '../src/db/fixed-statement.js';
import { benchDatabase, createAdmin, openSessions } from './support/database.js';
import { processCpuSeconds } from './support/cpu.js';
import { markdownTable, print } from './support/measure.js';

const RUNS = Number(process.env.BENCH_STATEMENT_RUNS ?? 20_000);

async function main() {
  const database = await benchDatabase('bench_statements');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { db } = database;
    await seedUsers(db, { users: 100_000, seed: 1 });
    await sql`vacuum analyze`.execute(db);
    const { secret } = await apiKeyService({ db, clock: systemClock }).create(OPERATOR, { name: 'bench', permissions: ['users.list'] });
    const admin = await createAdmin(db);
    const [session] = await openSessions(db, admin, 1);
    const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;

    const now = new Date();
    const cases: { label: string; statement: FixedStatement<never, unknown>; values: unknown[]; expectRows: number }[] = [
      { label: 'API key lookup', statement: keyBySecretDigest as never, values: keyBySecretDigest.parameters({ digest: digestSecret(secret) }), expectRows: 1 },
      {
        label: 'bearer session',
        statement: bearerSession as never,
        values: bearerSession.parameters({
          accessDigest: digestSecret(session!.access_token),
          issuedAfter: new Date(now.getTime() - ACCESS_TOKEN_TTL_S * 1000),
          now,
          idleCutoff: new Date(now.getTime() - 7 * 24 * 3600 * 1000),
          touchBefore: new Date(now.getTime() - 60_000),
        }),
        expectRows: 1,
      },
      { label: 'first page of 50 users', statement: firstPage as never, values: firstPage.parameters({ limit: 51, afterCreatedAt: '', afterId: '', status: '', role: '', pattern: '' }), expectRows: 51 },
    ];
    print(`${RUNS} executions of each statement on one connection; CPU of its backend process per execution`);
    const rows: string[][] = [];
    for (const c of cases) {
      const cost = async (name: string | undefined) => {
        const run = () => client.query(name ? { name, text: c.statement.sql, values: c.values } : { text: c.statement.sql, values: c.values });
        for (let i = 0; i < 200; i++) await run(); // warm-up; a named statement settles on its plan
        const check = await run();
        if (check.rows.length !== c.expectRows) throw new Error(`${c.label}: ${check.rows.length} rows, expected ${c.expectRows}`);
        const before = processCpuSeconds(backend);
        const started = process.hrtime.bigint();
        for (let i = 0; i < RUNS; i++) await run();
        const wallUs = Number(process.hrtime.bigint() - started) / 1000 / RUNS;
        return { cpuUs: ((processCpuSeconds(backend) - before) * 1e6) / RUNS, wallUs };
      };
      const name = `bench_${c.label.replace(/\W+/g, '_').toLowerCase()}`;
      const prepared = await cost(name);
      const unprepared = await cost(undefined);
      // PostgreSQL's own account of one execution of the prepared statement (the plan it settled on).
      const explain = await client.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, timing on) execute ${name}(${c.values.map((v) => (Buffer.isBuffer(v) ? `'\\x${v.toString('hex')}'` : v instanceof Date ? `'${v.toISOString()}'` : `'${String(v)}'`)).join(', ')})`,
      );
      const lines = explain.rows.map((r) => r['QUERY PLAN']);
      const timing = (label: string) => lines.find((l) => l.startsWith(label))?.replace(/^[^:]+:\s*/, '') ?? '–';
      const line = [c.label, prepared.cpuUs.toFixed(0), unprepared.cpuUs.toFixed(0), prepared.wallUs.toFixed(0), timing('Planning Time'), timing('Execution Time')];
      print(`  ${line.join(' | ')}`);
      rows.push(line);
    }
    print('');
    print(
      markdownTable(
        ['statement', 'backend CPU µs, prepared', 'backend CPU µs, unprepared', 'round trip µs, prepared', 'EXPLAIN ANALYZE planning', 'EXPLAIN ANALYZE execution'],
        rows,
      ),
    );
  } finally {
    await client.end();
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
