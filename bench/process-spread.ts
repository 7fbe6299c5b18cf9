// How far identical service processes read apart: three processes of the same build (the service's
// script, settings and Node flags, as users-list.ts starts it, but all three after the database is
// migrated and seeded, started in the order A, B, C) on GET /users?limit=50 with an API key and with
// a bearer token, measured against each other in rounds of alternating 1-s slices, as users-list.ts
// measures the service against its floor. Without a variant the truth is 100 %: what the ratios
// spread is what two processes of one build differ by in a run, which a run of the service against
// its floor cannot tell from the service's cost (docs/BENCHMARKS.md, "Reading a verdict").
// BENCH_VARIANT_ENV (e.g. "RATE_LIMIT_SYNC_INTERVAL_MS=0") is given to the third process only:
// a setting's cost, read against the spread of the two others.
// Usage: BENCH_ROUNDS=24 node --import tsx bench/process-spread.ts
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, VARIANT_ENV, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { expectSameAnswers } from './support/compare.js';
import { describe, machineLine, markdownTable, measure, measureInTurn, medianWithInterval, percent, print, quietBefore, quietness, slicedMeasurement, times, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const { seconds: DURATION, slices: SLICES } = slicedMeasurement();
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH = '/users?limit=50';
const NAMES = ['A', 'B', 'C'] as const;
type Name = (typeof NAMES)[number];
const CREDENTIALS = { key: 'API key', bearer: 'bearer' } as const;
type Credential = keyof typeof CREDENTIALS;

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
  print(machineLine(`three service processes (${SERVICE_SCRIPT}), started A, B, C; C with ${JSON.stringify(VARIANT_ENV)}; wrk -t2 -c${CONNECTIONS}`));
  const token = await bearer();
  // All three answer 200 with the same bytes, so none is timing refusals (a variant included).
  for (const other of ['B', 'C'] as const) {
    await expectSameAnswers(processes.A, processes[other], PATH, [['API key', { 'x-api-key': secret }], ['bearer', token]], ['A', other]);
  }
  for (const name of NAMES) {
    for (const headers of [{ 'x-api-key': secret }, token]) await wrk(`${processes[name].url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
  }
  await settleBeforeMeasuring(database);
  await quietBefore();

  print(`\nGET ${PATH}, ${ROUNDS} rounds of ${DURATION} s per measurement, in ${SLICES} alternating slices`);
  type Step = `${Name}:${Credential}`;
  const rounds: Record<Step, Measurement>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const headers = { key: { 'x-api-key': secret }, bearer: await bearer() }; // a fresh session: access tokens live 600 s
    const steps = {} as Record<Step, (seconds: number) => Promise<Measurement>>;
    for (const credential of ['key', 'bearer'] as const) {
      for (const name of NAMES) {
        steps[`${name}:${credential}`] = (seconds) =>
          measure(`${name}, ${CREDENTIALS[credential]}`, `${processes[name].url}${PATH}`, processes[name], { connections: CONNECTIONS, seconds, headers: headers[credential] });
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
  print(`\none process against another, medians of ${ROUNDS} rounds' ratios with their 95 % intervals (without a variant, 100 % and 1.00x are the truth):\n`);
  const pairs = [['B', 'A'], ['C', 'A'], ['C', 'B']] as const;
  const ratios = (credential: Credential, [over, under]: readonly [Name, Name], field: 'rps' | 'p99') =>
    rounds.map((r) => r[`${over}:${credential}`][field] / r[`${under}:${credential}`][field]);
  const rows = (['key', 'bearer'] as const).flatMap((credential) => [
    [`req/s, ${CREDENTIALS[credential]}`, ...pairs.map((pair) => medianWithInterval(ratios(credential, pair, 'rps'), percent))],
    [`p99, ${CREDENTIALS[credential]}`, ...pairs.map((pair) => medianWithInterval(ratios(credential, pair, 'p99'), times))],
  ]);
  print(markdownTable([`${ROUNDS} rounds`, ...pairs.map(([over, under]) => `${over} / ${under}`)], rows));
});
