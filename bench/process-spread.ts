// How far identical service processes read apart: three processes of the same build (the service
// as the benchmarks start it) on GET /users?limit=50 with an API key and with a bearer token,
// measured against each other in rounds of alternating 1-s slices, as users-list.ts measures the
// service against its floor. Every process starts after the database is migrated and seeded, so none
// carries a history the others lack. The truth is 100 %: a ratio whose interval leaves it says
// that a process keeps a speed of its own for its life, which no number of rounds within one run
// averages out (only more runs, each with new processes, do: docs/BENCHMARKS.md, "Sixteenth look").
// BENCH_VARIANT_ENV (e.g. "RATE_LIMIT_SYNC_INTERVAL_MS=0") is given to the third process only:
// a setting's cost, read against the spread of the two others.
// Usage: BENCH_ROUNDS=24 node --import tsx bench/process-spread.ts
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase } from './support/database.js';
import { describe, machineLine, measure, measureInTurn, medianWithInterval, percent, print, quietBefore, quietness, slicedMeasurement, times, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const { seconds: DURATION, slices: SLICES } = slicedMeasurement();
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH = '/users?limit=50';
const VARIANT_ENV = Object.fromEntries(
  (process.env.BENCH_VARIANT_ENV ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
) as Record<string, string>;
const NAMES = ['A', 'B', 'C'] as const;
type Name = (typeof NAMES)[number];

runBenchmark(() => benchDatabase('bench_spread', { migrate: true }), async (database, children) => {
  const { db } = database;
  await seedUsers(db, { users: 100_000, seed: 1 });
  await sql`vacuum analyze users`.execute(db);
  const { secret, bearer } = await benchCredentials(db, 'users.list');
  const processes = {} as Record<Name, Target & { url: string }>;
  for (const name of NAMES) {
    const started = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, ...(name === 'C' ? VARIANT_ENV : {}) });
    children.push(started.child);
    processes[name] = { url: started.url, pid: started.child.pid!, postmaster: database.postmaster };
  }
  print(machineLine(`three service processes (${SERVICE_SCRIPT}), C with ${JSON.stringify(VARIANT_ENV)}; wrk -t2 -c${CONNECTIONS}`));
  const token = await bearer();
  for (const name of NAMES) {
    for (const headers of [{ 'x-api-key': secret }, token]) await wrk(`${processes[name].url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
  }
  await quietBefore();

  print(`\nGET ${PATH}, ${ROUNDS} rounds of ${DURATION} s per measurement, in ${SLICES} alternating slices`);
  const credentials = { key: 'API key', bearer: 'bearer' } as const;
  type Step = `${Name}:${keyof typeof credentials}`;
  const rounds: Record<Step, Measurement>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const headers = { key: { 'x-api-key': secret }, bearer: await bearer() }; // a fresh session: access tokens live 600 s
    const steps = {} as Record<Step, (seconds: number) => Promise<Measurement>>;
    for (const credential of ['key', 'bearer'] as const) {
      for (const name of NAMES) {
        steps[`${name}:${credential}`] = (seconds) =>
          measure(`${name}, ${credentials[credential]}`, `${processes[name].url}${PATH}`, processes[name], { connections: CONNECTIONS, seconds, headers: headers[credential] });
      }
    }
    const r = await measureInTurn(round, steps, { seconds: DURATION, slices: SLICES });
    for (const m of Object.values(r)) print(describe(m));
    rounds.push(r);
  }
  const all = rounds.flatMap((r) => Object.values(r));
  const failures = all.reduce((sum, m) => sum + m.failures, 0);
  if (failures > 0) throw new Error(`${failures} requests failed: the ratios would compare refusals`);
  print(`\n${quietness(all).text}`);
  print(`\none process against another, ${ROUNDS} rounds (A and B the same build and settings: 100 % and 1.00x are the truth):`);
  for (const credential of ['key', 'bearer'] as const) {
    for (const [over, under] of [['B', 'A'], ['C', 'A'], ['C', 'B']] as const) {
      const of = (name: Name) => rounds.map((r) => r[`${name}:${credential}`]);
      const rps = of(over).map((m, i) => m.rps / of(under)[i]!.rps);
      const p99 = of(over).map((m, i) => m.p99 / of(under)[i]!.p99);
      print(`  ${credentials[credential].padEnd(7)} ${over}/${under}: req/s ${medianWithInterval(rps, percent)}; p99 ${medianWithInterval(p99, times)}`);
    }
  }
});
