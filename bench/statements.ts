// What each hot-path statement costs PostgreSQL: the service's own statements (their compiled
// text), run on one connection BENCH_STATEMENT_RUNS times each, named (prepared, as the service runs
// them by default) and unnamed (DB_PREPARED_STATEMENTS=false), with the CPU the connection's backend
// used meanwhile (to the nanosecond, /proc/<pid>/schedstat); then PostgreSQL's own timing of one
// execution (EXPLAIN ANALYZE of the prepared statement, after the runs).
// The runs are cut into BENCH_STATEMENT_ROUNDS rounds that take the statements in turn, seconds
// apart, so that a neighbour's load falls on all of them alike; each figure is the median over the
// rounds [range], and the bearer statement's cost is compared with the key lookup's round by round.
// The key lookup (an operator's key, the cheapest) is the reference: the bearer path's session
// statement (an administrator's) should cost no more. The other two show the ordinary cases: a key
// made by a user (its creator's permissions are checked) and a user holding a role; `select 1`,
// what every statement costs before it reads anything. BENCH_SHAPE=production: the tables of a
// database in use (seedProductionShape), where every read is an index probe.
import { loadavg } from 'node:os';
import pg from 'pg';
import { sql } from 'kysely';
import { keyBySecretDigest } from '../src/api-keys/repository.js';
import { bearerSession } from '../src/auth/sessions/repository.js';
import { firstPage } from '../src/users/repository.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';
import { seedUsers } from '../src/cli/seed.js';
import { createUserWithPassword } from '../src/users/credentials.js';
import type { FixedStatement } from '../src/db/fixed-statement.js';
import { bearerStatementValues, benchDatabase, createAdmin, openSessions, seedProductionShape, operatorKey } from './support/database.js';
import { threadCpuSeconds } from './support/cpu.js';
import { markdownTable, median, percent, print, range } from './support/measure.js';

const RUNS = Number(process.env.BENCH_STATEMENT_RUNS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_STATEMENT_ROUNDS ?? 10);

/** A parameter as an SQL literal, for EXPLAIN EXECUTE (which takes no parameters of its own). */
function literal(value: unknown): string {
  if (value instanceof Date) return `'${value.toISOString()}'`; // a build that sends Dates as text
  if (!Buffer.isBuffer(value)) return `'${String(value)}'`;
  // A Date goes as a binary timestamptz (src/db/fixed-statement.ts): 8 bytes; the digests are 32.
  if (value.length === 8) return `'${new Date(Number(value.readBigInt64BE() / 1000n) + Date.UTC(2000, 0, 1)).toISOString()}'`;
  return `'\\x${value.toString('hex')}'`;
}

async function main() {
  const database = await benchDatabase('bench_statements');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { db } = database;
    await seedUsers(db, { users: 100_000, seed: 1 });
    if (process.env.BENCH_SHAPE === 'production') await seedProductionShape(db);
    await sql`vacuum analyze`.execute(db);
    const { secret } = await operatorKey(db, { name: 'bench', permissions: ['users.list'] });
    const admin = await createAdmin(db);
    const [session] = await openSessions(db, admin, 1);
    // A key as a signed-in administrator makes it (POST /api-keys): its creator is the admin.
    const made = await operatorKey(db, { name: 'bench by admin', permissions: ['users.list'] });
    await db.updateTable('api_keys').set({ created_by: admin.id }).where('name', '=', 'bench by admin').execute();
    // A user holding a role of three permissions.
    const role = await db.insertInto('roles').values({ name: 'bench reader', name_key: 'bench reader' }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(['users.list', 'users.read', 'tasks.list'].map((permission) => ({ role_id: role.id, permission }))).execute();
    const readerEmail = 'bench-reader@example.com';
    const reader = { email: readerEmail, ...(await createUserWithPassword(db, { email: readerEmail, firstName: 'Bench', lastName: 'Reader', password: 'benchmark passphrase 1234', roles: ['bench reader'] })) };
    const [readerSession] = await openSessions(db, reader, 1);
    const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;

    const now = new Date();
    const bearerValues = (accessToken: string) => bearerStatementValues(accessToken, now);
    const cases: { label: string; statement: FixedStatement<never, unknown>; values: unknown[]; expectRows: number }[] = [
      { label: 'API key lookup', statement: keyBySecretDigest as never, values: keyBySecretDigest.parameters({ digest: digestSecret(secret) }), expectRows: 1 },
      { label: 'bearer session', statement: bearerSession as never, values: bearerValues(session!.access_token), expectRows: 1 },
      { label: 'API key lookup, key made by the admin', statement: keyBySecretDigest as never, values: keyBySecretDigest.parameters({ digest: digestSecret(made.secret) }), expectRows: 1 },
      { label: 'bearer session, user with a role', statement: bearerSession as never, values: bearerValues(readerSession!.access_token), expectRows: 1 },
      { label: 'first page of 50 users', statement: firstPage as never, values: firstPage.parameters({ limit: 51, afterCreatedAt: '', afterId: '', status: '', role: '', pattern: '' }), expectRows: 51 },
      // What any statement costs, whatever it reads: the protocol, the executor and the commit.
      { label: 'select 1 (the cost of any statement)', statement: { sql: 'select 1' } as never, values: [], expectRows: 1 },
    ];
    const perRound = Math.ceil(RUNS / ROUNDS);
    print(`${perRound * ROUNDS} executions of each statement on one connection, in ${ROUNDS} rounds taking the statements in turn; CPU of its backend process per execution, median over the rounds [range]`);
    const named = (c: (typeof cases)[number]) => `bench_${c.label.replace(/\W+/g, '_').toLowerCase()}`;
    const runner = (c: (typeof cases)[number], name: string | undefined) => () =>
      client.query(name ? { name, text: c.statement.sql, values: c.values } : { text: c.statement.sql, values: c.values });
    for (const c of cases) {
      for (const name of [named(c), undefined]) {
        const run = runner(c, name);
        for (let i = 0; i < 200; i++) await run(); // warm-up; a named statement settles on its plan
        const check = await run();
        if (check.rows.length !== c.expectRows) throw new Error(`${c.label}: ${check.rows.length} rows, expected ${c.expectRows}`);
      }
    }
    const samples = cases.map(() => ({ prepared: [] as number[], unprepared: [] as number[], wall: [] as number[] }));
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, c] of cases.entries()) {
        for (const name of [named(c), undefined]) {
          const run = runner(c, name);
          const before = threadCpuSeconds(backend);
          const started = process.hrtime.bigint();
          for (let n = 0; n < perRound; n++) await run();
          const wallUs = Number(process.hrtime.bigint() - started) / 1000 / perRound;
          const cpuUs = ((threadCpuSeconds(backend) - before) * 1e6) / perRound;
          if (name) {
            samples[i]!.prepared.push(cpuUs);
            samples[i]!.wall.push(wallUs);
          } else {
            samples[i]!.unprepared.push(cpuUs);
          }
        }
      }
    }
    const rows: string[][] = [];
    for (const [i, c] of cases.entries()) {
      // PostgreSQL's own account of one execution of the prepared statement (the plan it settled on).
      const explain = await client.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, timing on) execute ${named(c)}${c.values.length ? `(${c.values.map(literal).join(', ')})` : ''}`,
      );
      const lines = explain.rows.map((r) => r['QUERY PLAN']);
      const timing = (label: string) => lines.find((l) => l.startsWith(label))?.replace(/^[^:]+:\s*/, '') ?? '–';
      const µs = (v: number) => v.toFixed(1);
      const line = [c.label, range(samples[i]!.prepared, µs), range(samples[i]!.unprepared, (v) => v.toFixed(0)), median(samples[i]!.wall).toFixed(0), timing('Planning Time'), timing('Execution Time')];
      print(`  ${line.join(' | ')}`);
      rows.push(line);
    }
    const ratios = samples[1]!.prepared.map((bearer, round) => bearer / samples[0]!.prepared[round]!);
    print(`  bearer session / API key lookup, prepared, per round: ${range(ratios, percent)}  (${ratios.map(percent).join(', ')})`);
    print('');
    print(
      markdownTable(
        ['statement', 'backend CPU µs, prepared', 'backend CPU µs, unprepared', 'round trip µs, prepared', 'EXPLAIN ANALYZE planning', 'EXPLAIN ANALYZE execution'],
        rows,
      ),
    );
    print('');
    print(`bearer session / API key lookup, prepared: ${range(ratios, percent)} (median of ${ROUNDS} rounds [range]); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await client.end();
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
