// Benchmark of one person's week of meetings, GET /meetings?from=<Monday>&until=<next Monday>&attendee_id=<id>,
// against its floor (bench/floor.ts runs the service's own statement, prepared), with a million
// meetings stored (see docs/BENCHMARKS.md for how to run it and the results). In one run:
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL), migrated by the service, seeded with a million
//     meetings (bench/support/meetings.ts, seedMeetingsOnce);
//  2. the service (dist/src/main.js, as users-list.ts starts it) and the floor, each in its own process;
//  3. the plans of the person's week and of the organisation's week (EXPLAIN ANALYZE, BUFFERS);
//  4. the answers checked byte for byte (API key and bearer), then rounds of (floor, service) with
//     each credential, in alternating 1-s slices, so each ratio compares measurements under the same load (the
//     order a row of a Williams design, reversed from round to round: measureInTurn).
// The load comes from wrk. Prints a markdown table at the end.
import { sql } from 'kysely';
import { personFirstPage } from '../src/meetings/repository.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { FLOOR_ROUND_LABELS, describe, floorRatiosLine, floorRatiosOf, machineLine, measure, measureInTurn, slicedMeasurement, print, printFloorTable, printFloorTargets, quietBefore, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';
import { expectSameAnswers, floorBeside, printPlans } from './support/compare.js';
import { SEEDED_MEETINGS, medianPersonWeek, seedMeetingsOnce } from './support/meetings.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// Each measurement: 5 s as five alternating 1-s slices (measureInTurn), checked now, before any seeding.
const { seconds: DURATION, slices: SLICES } = slicedMeasurement();
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);

runBenchmark(() => benchDatabase('bench_meetings', { migrate: false }), async (database, children) => {
  const { db } = database;
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
  children.push(service.child);
  await seedMeetingsOnce(database);
  const { from, until, person, people, path } = await medianPersonWeek(db);
  const attendeeRows = Number((await sql<{ n: string }>`select count(*) as n from meeting_attendees`.execute(db)).rows[0]!.n);
  print(`${attendeeRows} attendee rows; the person ${person.user_id} has ${person.n} meetings in the week of ${from.toISOString().slice(0, 10)} (median of ${people} people)`);

  // The plans, as PostgreSQL runs them (warm buffers: each is run once first).
  const week = [from.toISOString(), until.toISOString()];
  await printPlans(database.url, [
    { label: `the person's week (${path})`, text: personFirstPage.sql, values: personFirstPage.parameters({ from, until, attendeeId: person.user_id, afterStartsAt: '', afterId: '', limit: 51 }) },
    // The organisation's week, first page: the service's bound (the ordered btree walk), against
    // the same with the GiST's `during &&` added (a bitmap of both, then a sort of the whole week)
    // and with `during &&` alone (a walk of every meeting before the week).
    ...[
      ['the service\'s', `m.starts_at >= $1::timestamptz - interval '24 hours' and m.starts_at < $2::timestamptz and m.ends_at > $1::timestamptz`],
      ['with `during &&` added', `m.during && tstzrange($1::timestamptz, $2::timestamptz, '[)') and m.starts_at >= $1::timestamptz - interval '24 hours' and m.starts_at < $2::timestamptz`],
      ['`during &&` alone', `m.during && tstzrange($1::timestamptz, $2::timestamptz, '[)')`],
    ].map(([label, where]) => ({ label: `the organisation's week, first page of 50, ${label} predicate`, text: `select m.id from meetings m where ${where} order by m.starts_at, m.id limit 51`, values: week })),
  ]);

  const { secret, bearer } = await benchCredentials(db, 'meetings.list');
  const targets = await floorBeside(service, database, children);

  await expectSameAnswers(targets.service, targets.floor, path, [['API key', { 'x-api-key': secret }], ['bearer', await bearer()]]);

  print(`\n${machineLine(`load generator wrk -t2 -c${CONNECTIONS}; service: NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null, DB_POOL_MAX=10; floor: pool of 10`)}`);
  const run = (label: string, target: Target & { url: string }, headers: Record<string, string>) => (seconds: number) =>
    measure(label, `${target.url}${path}`, target, { connections: CONNECTIONS, seconds, headers });
  print(`warming up each server and credential for ${WARM_UP} s`);
  for (const target of [targets.floor, targets.service]) {
    for (const headers of [{ 'x-api-key': secret }, await bearer()]) await wrk(`${target.url}${path}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
  }

  await settleBeforeMeasuring(database);
  await quietBefore();

  print(`\nGET one person's week, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per measurement, in ${SLICES} alternating slices, ${SEEDED_MEETINGS} meetings`);
  type Round = Record<'floorKey' | 'serviceKey' | 'floorBearer' | 'serviceBearer', Measurement>;
  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const token = await bearer();
    const r: Round = await measureInTurn(round, {
      floorKey: run(FLOOR_ROUND_LABELS.floorKey, targets.floor, { 'x-api-key': secret }),
      serviceKey: run(FLOOR_ROUND_LABELS.serviceKey, targets.service, { 'x-api-key': secret }),
      floorBearer: run(FLOOR_ROUND_LABELS.floorBearer, targets.floor, token),
      serviceBearer: run(FLOOR_ROUND_LABELS.serviceBearer, targets.service, token),
    }, { seconds: DURATION, slices: SLICES });
    for (const m of Object.values(r)) print(describe(m));
    print(`  ${floorRatiosLine(r)}`);
    rounds.push(r);
  }
  const ratios = floorRatiosOf(rounds);
  printFloorTable(`one person's week (${person.n} meetings)`, rounds, ratios);
  printFloorTargets(rounds, ratios);
});
