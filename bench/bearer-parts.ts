// What each part of the bearer statement costs PostgreSQL: the service's statement (its compiled
// text, for an administrator) against the API key lookup (an operator's key: the reference
// docs/BENCHMARKS.md holds the bearer statement to), and the bearer statement cut down one part at
// a time: nothing read (`select 1`), the token alone, with its session, with its user, with the
// admin check; and the statement as it was before the admin role had a fixed id. Each is named (prepared), run on one connection, the cases taken in
// turn over BENCH_STATEMENT_ROUNDS rounds of BENCH_PARTS_RUNS executions; backend CPU per
// execution (/proc/<pid>/schedstat), median over the rounds, and each against the key lookup
// round by round.
// BENCH_SHAPE=production: the tables of a database in use (seedProductionShape). The cuts are
// written here by hand from src/auth/sessions/repository.ts: they measure its parts, not the service.
import pg from 'pg';
import { sql } from 'kysely';
import { keyBySecretDigest } from '../src/api-keys/repository.js';
import { bearerSession } from '../src/auth/sessions/repository.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';
import { seedUsers } from '../src/cli/seed.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';
import { bearerStatementValues, benchDatabase, createAdmin, openSessions, seedProductionShape, operatorKey } from './support/database.js';
import { threadCpuSeconds } from './support/cpu.js';
import { median, percent, print, range } from './support/measure.js';

const RUNS = Number(process.env.BENCH_PARTS_RUNS ?? 4000);
const ROUNDS = Number(process.env.BENCH_STATEMENT_ROUNDS ?? 10);
const PRODUCTION = process.env.BENCH_SHAPE === 'production';

// The bearer statement's parameters: $1 touchBefore, $2 the access digest, $3 issuedAfter, $4 now, $5 idleCutoff.
const FROM = `from session_tokens t join sessions s on s.id = t.session_id`;
const LIVE = `t.access_digest = $2 and t.issued_at > $3 and least(s.ended_at, s.revoked_at, s.expires_at) > $4 and s.last_used_at > $5`;
const CUTS: { label: string; text: string }[] = [
  {
    label: 'the token alone',
    text: `select t.session_id from session_tokens t where t.access_digest = $2 and t.issued_at > $3
      and $1::timestamptz is not null and $4::timestamptz is not null and $5::timestamptz is not null`,
  },
  { label: '+ its live session', text: `select s.id, s.user_id, s.last_used_at < $1 as stale ${FROM} where ${LIVE}` },
  {
    label: '+ its active user',
    text: `select s.id, s.user_id, s.last_used_at < $1 as stale, u.must_change_password ${FROM} join users u on u.id = s.user_id
      where ${LIVE} and u.status = 'active'`,
  },
  {
    label: '+ holds the admin role',
    text: `select s.id, s.user_id, s.last_used_at < $1 as stale, u.must_change_password, exists (
        select 1 from user_roles ur where ur.user_id = s.user_id and ur.role_id = '${ADMIN_ROLE_ID}'
      ) as admin ${FROM} join users u on u.id = s.user_id where ${LIVE} and u.status = 'active'`,
  },
];

/** The statement as it was before the admin role had a fixed id: "holds it" read roles too, by the role's name. */
function adminByName(statement: string): string {
  const byId = `select 1 from user_roles ur where ur.user_id = s.user_id and ur.role_id = '${ADMIN_ROLE_ID}'`;
  if (!statement.includes(byId)) throw new Error('the admin check is no longer the one this benchmark replaces');
  return statement.replace(byId, `select 1 from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = s.user_id and r.built_in and r.name = 'admin'`);
}

async function main() {
  const database = await benchDatabase('bench_bearer_parts');
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const { db } = database;
    await seedUsers(db, { users: 100_000, seed: 1 });
    if (PRODUCTION) await seedProductionShape(db);
    await sql`vacuum analyze`.execute(db);
    const { secret } = await operatorKey(db, { name: 'bench', permissions: ['users.list'] });
    const admin = await createAdmin(db);
    const [session] = await openSessions(db, admin, 1);
    const bearerValues = bearerStatementValues(session!.access_token, new Date());
    const cases = [
      { label: 'API key lookup (the reference)', text: keyBySecretDigest.sql, values: keyBySecretDigest.parameters({ digest: digestSecret(secret) }) },
      { label: 'select 1', text: 'select 1', values: [] as unknown[] },
      ...CUTS.map((cut) => ({ ...cut, values: bearerValues })),
      { label: 'the bearer statement (the service)', text: bearerSession.sql, values: bearerValues },
      { label: 'the same, the admin role found by its name (before 20261208T1000)', text: adminByName(bearerSession.sql), values: bearerValues },
    ];
    const backend = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const run = (i: number) => client.query({ name: `part_${i}`, text: cases[i]!.text, values: cases[i]!.values });
    for (const [i, c] of cases.entries()) {
      for (let n = 0; n < 300; n++) await run(i); // warm-up; a named statement settles on its plan
      if ((await run(i)).rows.length !== 1) throw new Error(`${c.label}: no row`);
    }
    const samples = cases.map(() => [] as number[]);
    for (let round = 0; round < ROUNDS; round++) {
      for (const i of cases.keys()) {
        const before = threadCpuSeconds(backend);
        for (let n = 0; n < RUNS; n++) await run(i);
        samples[i]!.push(((threadCpuSeconds(backend) - before) * 1e6) / RUNS);
      }
    }
    print(`${PRODUCTION ? 'production' : 'default'} shape; ${RUNS} executions per case per round, ${ROUNDS} rounds; backend CPU µs per execution, median [range], and against the key lookup round by round`);
    print('| statement | backend CPU µs | against the key lookup |');
    print('| --- | --- | --- |');
    for (const [i, c] of cases.entries()) {
      const ratios = samples[i]!.map((s, round) => s / samples[0]![round]!);
      print(`| ${c.label} | ${range(samples[i]!, (v) => v.toFixed(1))} | ${percent(median(ratios))} |`);
    }
  } finally {
    await client.end();
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
