// Scale-out on one host: the service with WORKERS=1 and WORKERS=2 side by side (both running, on
// the same PostgreSQL, measured in turns seconds apart, so each ratio compares measurements under
// the same load), on GET /users?limit=50 with an API key and on POST /tokens (every request
// rotating a session: bench/refresh.lua), with the CPU each side used per request: the service's
// processes (every worker) and PostgreSQL's. Prints a markdown table at the end; docs/BENCHMARKS.md
// reads it for a larger host.
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchDatabase, createAdmin, settleBeforeMeasuring, operatorKey } from './support/database.js';
import { childPids } from './support/cpu.js';
import { describe, machineLine, markdownTable, measure, measureInTurn, median, medianOf, percent, print, range, type Measurement, type Target } from './support/measure.js';
import { refreshScripts } from './support/refresh.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const USERS = Number(process.env.BENCH_USERS ?? 10_000);
const PATH = '/users?limit=50';

runBenchmark(() => benchDatabase('bench_scale_out'), async (database, children) => {
  const { db } = database;
  await seedUsers(db, { users: USERS, seed: 1 });
  await sql`vacuum analyze users`.execute(db);
  const { secret } = await operatorKey(db, { name: 'bench', permissions: ['users.list'] });
  const admin = await createAdmin(db);
  const one = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, WORKERS: '1' });
  children.push(one.child);
  const two = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, WORKERS: '2' });
  children.push(two.child);
  // /livez answered by the first worker up: wait for the second.
  while (childPids(two.child.pid!).length < 2) await new Promise((r) => setTimeout(r, 200));
  await new Promise((r) => setTimeout(r, 3000));
  const targets: Record<'one' | 'two', Target & { url: string }> = {
    one: { url: one.url, pid: one.child.pid!, postmaster: database.postmaster },
    two: { url: two.url, pid: two.child.pid!, postmaster: database.postmaster },
  };

  const refreshScript = refreshScripts(db, admin, CONNECTIONS);
  const users = (label: string, target: Target & { url: string }) => (seconds: number) =>
    measure(label, `${target.url}${PATH}`, target, { connections: CONNECTIONS, seconds, headers: { 'x-api-key': secret } });
  const tokens = (label: string, target: Target & { url: string }) => async (seconds: number) =>
    measure(label, `${target.url}/tokens`, target, { connections: CONNECTIONS, seconds, script: await refreshScript() });

  print(machineLine(`wrk -t2 -c${CONNECTIONS}; service: NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null, DB_POOL_MAX=10 per worker`));
  print(`warming up each for ${WARM_UP} s per path`);
  for (const target of [targets.one, targets.two]) {
    await wrk(`${target.url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers: { 'x-api-key': secret } });
    await wrk(`${target.url}/tokens`, { connections: CONNECTIONS, seconds: WARM_UP, script: await refreshScript() });
  }

  await settleBeforeMeasuring(database);

  const rounds: Record<'usersOne' | 'usersTwo' | 'tokensOne' | 'tokensTwo', Measurement>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const r = await measureInTurn(round, {
      usersOne: users('GET /users, 1 process', targets.one),
      usersTwo: users('GET /users, 2 processes', targets.two),
      tokensOne: tokens('POST /tokens, 1 process', targets.one),
      tokensTwo: tokens('POST /tokens, 2 processes', targets.two),
    }, { seconds: DURATION });
    for (const m of Object.values(r)) print(describe(m));
    print(`  2/1: GET /users ${percent(r.usersTwo.rps / r.usersOne.rps)}, POST /tokens ${percent(r.tokensTwo.rps / r.tokensOne.rps)}`);
    rounds.push(r);
  }

  const ms = (v: number) => v.toFixed(2);
  const row = (label: string, key: keyof (typeof rounds)[number], ratio: string) => {
    const m = medianOf(rounds.map((r) => r[key]));
    const load = median(rounds.map((r) => r[key].load));
    return [label, range(rounds.map((r) => r[key].rps), (v) => v.toFixed(0)), m.p99.toFixed(1), ms(m.nodeMs), ms(m.postgresMs), percent(m.postgresMs / (m.nodeMs + m.postgresMs)), load.toFixed(1), ratio];
  };
  const ratio = (a: 'usersTwo' | 'tokensTwo', b: 'usersOne' | 'tokensOne') => `${range(rounds.map((r) => r[a].rps / r[b].rps), percent)} of 1 process`;
  print(`\nmedians over ${ROUNDS} rounds [range]:\n`);
  print(
    markdownTable(
      ['', 'req/s', 'p99 ms', 'service CPU ms/req', 'PostgreSQL CPU ms/req', "PostgreSQL's share of the CPU", 'load', 'ratio'],
      [
        row('GET /users, WORKERS=1', 'usersOne', '–'),
        row('**GET /users, WORKERS=2**', 'usersTwo', `**${ratio('usersTwo', 'usersOne')}**`),
        row('POST /tokens, WORKERS=1', 'tokensOne', '–'),
        row('**POST /tokens, WORKERS=2**', 'tokensTwo', `**${ratio('tokensTwo', 'tokensOne')}**`),
      ],
    ),
  );
});
