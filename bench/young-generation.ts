// Why `npm start` gives V8 32 MB semi-spaces (--max-semi-space-size=32, docs/DEPLOYMENT.md): the
// service and its floor (bench/floor.ts), each run with Node 20's default young generation (16 MB
// semi-spaces) and with npm start's, side by side on one person's week of meetings with an API key,
// in alternating rounds. Prints each one's requests per second and Node CPU per request (medians),
// and what the flag takes off each.
//
// Runs on the database a kept run of bench/meetings-week.ts seeded (a million meetings):
//   DATABASE_URL=<a local cluster> BENCH_KEEP_DATABASES=1 node --import tsx bench/meetings-week.ts   (once)
//   DATABASE_URL=<the same> BENCH_KEEP_DATABASES=1 BENCH_ROUNDS=5 node --import tsx bench/young-generation.ts
import { SERVICE_ENV, SERVICE_SCRIPT, START_NODE_FLAGS, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchDatabase, settleBeforeMeasuring, operatorKey } from './support/database.js';
import { measure, median, print, quietBefore, quietness, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';
import { medianPersonWeek } from './support/meetings.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
// Later flags win: each server starts with npm start's flags, then the young generation of its variant.
const YOUNG = { 'Node 20 default (16 MB)': '--max-semi-space-size=16', 'npm start (32 MB)': '--max-semi-space-size=32' };
if (!START_NODE_FLAGS.includes(YOUNG['npm start (32 MB)'])) throw new Error(`npm start's flags changed (${START_NODE_FLAGS.join(' ')}): update this benchmark`);

runBenchmark(() => benchDatabase('bench_meetings', { migrate: false }), async (database, children) => {
  if (!database.seeded) throw new Error('run bench/meetings-week.ts once with BENCH_KEEP_DATABASES=1 and this DATABASE_URL first: it seeds the million meetings');
  const targets: (Target & { url: string; label: string })[] = [];
  for (const [young, flag] of Object.entries(YOUNG)) {
    for (const [what, script, env] of [
      ['floor', 'bench/floor.ts', { DATABASE_URL: database.url }],
      ['service', SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV }],
    ] as const) {
      const started = await startProcess(script, env, [flag]);
      children.push(started.child);
      targets.push({ label: `${what}, ${young}`, url: started.url, pid: started.child.pid!, postmaster: database.postmaster });
    }
  }
  const { path } = await medianPersonWeek(database.db);
  const { secret } = await operatorKey(database.db, { name: `bench young ${new Date().toISOString()}`, permissions: ['meetings.list'] });
  const headers = { 'x-api-key': secret };
  for (const target of targets) await wrk(`${target.url}${path}`, { connections: CONNECTIONS, seconds: 10, headers }); // warm-up
  await settleBeforeMeasuring(database);
  await quietBefore();
  const measured = new Map<string, Measurement[]>();
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    for (const target of targets) {
      const m = await measure(target.label, `${target.url}${path}`, target, { connections: CONNECTIONS, seconds: DURATION, headers });
      measured.set(target.label, [...(measured.get(target.label) ?? []), m]);
      print(`  ${target.label.padEnd(36)} ${m.rps.toFixed(0)} req/s, Node ${m.nodeMs.toFixed(3)} ms/req`);
    }
  }
  const of = (label: string) => ({ rps: median(measured.get(label)!.map((m) => m.rps)), nodeMs: median(measured.get(label)!.map((m) => m.nodeMs)) });
  print(`\nmedians over ${ROUNDS} rounds, ${path}, API key, wrk -c${CONNECTIONS}:`);
  for (const target of targets) print(`  ${target.label.padEnd(36)} ${of(target.label).rps.toFixed(0)} req/s, Node ${of(target.label).nodeMs.toFixed(3)} ms/req`);
  const [small, large] = Object.keys(YOUNG);
  for (const what of ['floor', 'service']) {
    const before = of(`${what}, ${small}`);
    const after = of(`${what}, ${large}`);
    print(`  ${what}: 32 MB semi-spaces take ${((before.nodeMs - after.nodeMs) * 1000).toFixed(0)} µs of Node CPU off a request (${(((after.rps / before.rps) - 1) * 100).toFixed(1)} % req/s)`);
  }
  print(`  service / floor, both with npm start's flags: ${((of(`service, ${large}`).rps / of(`floor, ${large}`).rps) * 100).toFixed(1)} %`);
  print(`\n${quietness([...measured.values()].flat()).text}`);
});
