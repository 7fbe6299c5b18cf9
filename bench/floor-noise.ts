// How far a round's ratio moves when nothing differs: two processes of the same floor
// (bench/floor.ts), one person's week with an API key (bench/meetings-week.ts's path and load),
// measured against each other as the benchmarks measure the service against its floor. Whatever
// spread their ratios show is the measurement's own; a service's ratio cannot be read finer than it.
// Two designs in each round, on the same pair (both measureInTurn's):
//   block:  each process measured once for BENCH_SLICES seconds, in turn;
//   sliced: BENCH_SLICES measurements of 1 s each, alternating, merged (the benchmarks' way:
//           drift slower than a second cancels here and not in a block).
// Usage: DATABASE_URL=... BENCH_KEEP_DATABASES=1 BENCH_ROUNDS=12 node --import tsx bench/floor-noise.ts
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { expectSameAnswers, floorBeside } from './support/compare.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { SEEDED_MEETINGS, medianPersonWeek, seedMeetingsOnce } from './support/meetings.js';
import { machineLine, measure, measureInTurn, medianWithInterval, percent, print, quietBefore, quietness, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const SLICES = Number(process.env.BENCH_SLICES ?? 5);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);

runBenchmark(() => benchDatabase('bench_meetings', { migrate: false }), async (database, children) => {
  // The service migrates and seeds the database (as meetings-week.ts does). It stays up, idle, as
  // it is while its floor is measured in the benchmarks: its background steps run beside both.
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
  children.push(service.child);
  await seedMeetingsOnce(database);
  const { path } = await medianPersonWeek(database.db);
  const { secret } = await benchCredentials(database.db, 'meetings.list');
  const headers = { 'x-api-key': secret };
  const floors: (Target & { url: string })[] = [];
  for (let i = 0; i < 2; i++) floors.push((await floorBeside(service, database, children)).floor);
  const [a, b] = floors as [Target & { url: string }, Target & { url: string }];
  // Both answer 200 with the same bytes, so neither is timing refusals.
  await expectSameAnswers(a, b, path, [['API key', headers]], ['floor A', 'floor B']);
  print(machineLine(`two floors, GET one person's week with an API key, ${SEEDED_MEETINGS} meetings; wrk -t2 -c${CONNECTIONS}`));
  for (const floor of floors) await wrk(`${floor.url}${path}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
  await settleBeforeMeasuring(database);
  await quietBefore();

  const run = (target: Target & { url: string }) => (seconds: number) => measure('floor', `${target.url}${path}`, target, { connections: CONNECTIONS, seconds, headers });
  const all: Measurement[] = [];
  const block: number[] = [];
  const sliced: number[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    // The benchmarks' two ways of measuring a round (measureInTurn): one block each, or slices.
    const blocks = await measureInTurn(round, { a: run(a), b: run(b) }, { seconds: SLICES });
    const slices = await measureInTurn(round, { a: run(a), b: run(b) }, { seconds: SLICES, slices: SLICES });
    block.push(blocks.a.rps / blocks.b.rps);
    sliced.push(slices.a.rps / slices.b.rps);
    all.push(blocks.a, blocks.b, slices.a, slices.b);
    print(`round ${round}: block ${percent(block.at(-1)!)} (${blocks.a.rps.toFixed(0)} / ${blocks.b.rps.toFixed(0)} req/s), sliced ${percent(sliced.at(-1)!)}`);
  }
  const failures = all.reduce((sum, m) => sum + m.failures, 0);
  if (failures > 0) throw new Error(`${failures} requests failed: the ratios would compare refusals`);
  print(`\n${quietness(all).text}`);
  print(`\nfloor A against floor B, ${ROUNDS} rounds (the same code: 100 % is the truth; the spread is the measurement's):`);
  for (const [design, ratios] of [['block', block], ['sliced', sliced]] as const) {
    print(`  ${design.padEnd(6)} ${medianWithInterval(ratios, percent)}, rounds from ${percent(Math.min(...ratios))} to ${percent(Math.max(...ratios))}`);
  }
});
