// Benchmark of GET /tasks?limit=50 against its floor (bench/floor.ts runs the service's own
// statement, prepared), with a million tasks stored, and the millionth task's page against the
// first (see docs/BENCHMARKS.md for how to run it and the results). In one run:
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL), migrated by the service, seeded with
//     BENCH_TASK_USERS users (2,000) and BENCH_TASKS tasks (1,000,000) among them by the command
//     line's own seeding, then VACUUM ANALYZE;
//  2. the service (dist/src/main.js, as users-list.ts starts it, without its maintenance step: see
//     below) and the floor, each in its own process;
//  3. the plans of the first page, the millionth task's page and a title search (EXPLAIN ANALYZE, BUFFERS);
//  4. the answers checked byte for byte (API key and bearer), then rounds of (floor, service) with
//     each credential, in alternating 1-s slices, so each ratio compares measurements under the same load (the
//     order a row of a Williams design, reversed from round to round: measureInTurn);
//  5. then the service's first page against the page that ends with the millionth task (its cursor
//     is the service's, made for the task before that page), alternating, in the same rounds.
// The load comes from wrk. Prints a markdown table at the end.
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { seedTasks } from '../src/cli/seed-tasks.js';
import { firstPage, laterPage } from '../src/tasks/repository.js';
import { encodeCursor } from '../src/tasks/cursor.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, markSeeded, settleBeforeMeasuring } from './support/database.js';
import { FLOOR_ROUND_LABELS, describe, floorRatiosLine, floorRatiosOf, machineLine, measure, measureInTurn, slicedMeasurement, median, print, printFloorTable, printFloorTargets, quietBefore, range, times, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';
import { expectSameAnswers, floorBeside, printPlans } from './support/compare.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// Each measurement: 5 s as five alternating 1-s slices (measureInTurn), checked now, before any seeding.
const { seconds: DURATION, slices: SLICES } = slicedMeasurement();
const USERS = Number(process.env.BENCH_TASK_USERS ?? 2_000);
const TASKS = Number(process.env.BENCH_TASKS ?? 1_000_000);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const LIMIT = 50;
const PATH = `/tasks?limit=${LIMIT}`;

runBenchmark(() => benchDatabase('bench_tasks', { migrate: false }), async (database, children) => {
  const { db } = database;
  // No maintenance step in the service: the million audit events seeded below are sealed before the
  // rounds (settleBeforeMeasuring), not by the service during the seeding or the measurements (a
  // production service seals them as they come, 10,000 at a time: bench/audit-verify.ts and
  // audit-insert.ts measure that apart).
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, SWEEP_INTERVAL_S: '0' });
  children.push(service.child);
  if (database.seeded) print(`kept the database an earlier run seeded (BENCH_KEEP_DATABASES=1)`);
  else {
    let t = Date.now();
    await seedUsers(db, { users: USERS, seed: 1 });
    print(`seeded ${USERS} users in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    t = Date.now();
    await seedTasks(db, { tasks: TASKS, seed: 1 });
    print(`seeded ${TASKS} tasks (and their audit events) in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    await sql`vacuum analyze`.execute(db);
    await markSeeded(db);
  }

  // The millionth task's page: the LIMIT tasks that end with task number TASKS, after the one before them.
  const before = await sql<{ k: string; id: string }>`
    select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as k, id
    from tasks order by created_at, id offset ${TASKS - LIMIT - 1} limit 1`.execute(db);
  const deepAfter = { key: before.rows[0]!.k, id: before.rows[0]!.id };
  const { secret: cursorKey } = await db.selectFrom('service_secrets').select('secret').where('name', '=', 'cursor_signing').executeTakeFirstOrThrow();
  const deepPath = `${PATH}&cursor=${encodeCursor(cursorKey, deepAfter, { sort: 'created_at' })}`;

  const none = { statuses: [], assigneeId: '', dueBefore: '', dueAfter: '', search: '' };
  await printPlans(database.url, [
    { label: 'the first page', text: firstPage.sql, values: firstPage.parameters({ limit: LIMIT + 1, afterKey: '', afterId: '', ...none }) },
    { label: `the millionth task's page`, text: laterPage.sql, values: laterPage.parameters({ limit: LIMIT + 1, afterKey: deepAfter.key, afterId: deepAfter.id, ...none }) },
    {
      label: 'a title search, first page (the trigram index on fold_for_search(title))',
      text: `select t.id, t.title from tasks t where fold_for_search(t.title) like fold_for_search($1) order by t.created_at, t.id limit 51`,
      values: ['%zurich team%'],
    },
  ]);

  const { secret, bearer } = await benchCredentials(db, 'tasks.list');
  const targets = await floorBeside(service, database, children);

  await expectSameAnswers(targets.service, targets.floor, PATH, [['API key', { 'x-api-key': secret }], ['bearer', await bearer()]]);
  const deep = await fetch(`${service.url}${deepPath}`, { headers: { 'x-api-key': secret } });
  const deepBody = (await deep.json()) as { data: unknown[]; next_cursor: string | null };
  if (deep.status !== 200 || deepBody.data.length !== LIMIT || deepBody.next_cursor !== null) throw new Error(`the millionth task's page answered ${deep.status} with ${deepBody.data.length} tasks`);

  print(`\n${machineLine(`load generator wrk -t2 -c${CONNECTIONS}; service: NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null, DB_POOL_MAX=10; floor: pool of 10`)}`);
  const run = (label: string, target: Target & { url: string }, headers: Record<string, string>, path = PATH) => (seconds: number) =>
    measure(label, `${target.url}${path}`, target, { connections: CONNECTIONS, seconds, headers });
  print(`warming up each server and credential for ${WARM_UP} s`);
  for (const target of [targets.floor, targets.service]) {
    for (const headers of [{ 'x-api-key': secret }, await bearer()]) await wrk(`${target.url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
  }
  await wrk(`${service.url}${deepPath}`, { connections: CONNECTIONS, seconds: WARM_UP, headers: { 'x-api-key': secret } });

  await settleBeforeMeasuring(database);
  await quietBefore();

  print(`\nGET ${PATH}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per measurement, in ${SLICES} alternating slices, ${TASKS} tasks`);
  type Round = Record<'floorKey' | 'serviceKey' | 'floorBearer' | 'serviceBearer' | 'deepKey', Measurement>;
  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const token = await bearer();
    const r: Round = await measureInTurn(round, {
      floorKey: run(FLOOR_ROUND_LABELS.floorKey, targets.floor, { 'x-api-key': secret }),
      serviceKey: run(FLOOR_ROUND_LABELS.serviceKey, targets.service, { 'x-api-key': secret }),
      deepKey: run(`service, API key, the millionth task's page`, targets.service, { 'x-api-key': secret }, deepPath),
      floorBearer: run(FLOOR_ROUND_LABELS.floorBearer, targets.floor, token),
      serviceBearer: run(FLOOR_ROUND_LABELS.serviceBearer, targets.service, token),
    }, { seconds: DURATION, slices: SLICES });
    for (const m of Object.values(r)) print(describe(m));
    print(
      `  ${floorRatiosLine(r)}; ` +
        `deep/first (mean latency): ${(r.deepKey.mean / r.serviceKey.mean).toFixed(2)}x`,
    );
    rounds.push(r);
  }
  const ratios = {
    ...floorRatiosOf(rounds),
    deep: rounds.map((r) => r.deepKey.mean / r.serviceKey.mean),
  };
  printFloorTable(`GET ${PATH} (${TASKS} tasks)`, rounds, ratios, {
    afterKey: [{ label: `service, API key, the millionth task's page`, key: 'deepKey', ratio: `**${range(ratios.deep, times)} the first page's mean latency**` }],
  });
  const verdict = printFloorTargets(rounds, ratios);
  print(`  the millionth task's page <= 1.3x the first page: ${times(median(ratios.deep))} ${verdict(median(ratios.deep) <= 1.3)}`);
});
