// Garbage per request on one person's week of meetings (bench/meetings-week.ts's path, with an API
// key or a bearer token): the bytes the JavaScript heap allocates to answer one request, and the
// garbage collections' time per request, for the service, the floor and optionally another build
// of the service (BENCH_BASELINE: its main.js, e.g. a copy of the previous commit's dist/), measured
// in turn. The bytes are a count, not a timing: they vary far less between rounds than a timing
// run, which cannot tell small changes apart (docs/BENCHMARKS.md); and
// the minor collections' cost follows them (each copies the in-flight requests, about the same
// survivors on both sides, and they come once per so many bytes allocated).
// Every server runs with bench/support/allocation-probe.mjs preloaded (the probe of bench/allocation.ts).
// Usage: DATABASE_URL=<cluster> BENCH_KEEP_DATABASES=1 node --import tsx bench/week-garbage.ts
// (the million meetings of meetings-week.ts, kept; BENCH_CREDENTIAL=bearer; BENCH_ROUNDS, 3).
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { machineLine, markdownTable, median, print, quietBefore, range } from './support/measure.js';
import { wrk } from './support/wrk.js';
import { medianPersonWeek, seedMeetingsOnce } from './support/meetings.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CREDENTIAL = process.env.BENCH_CREDENTIAL ?? 'key';
const PROBE = ['--import', resolve('bench/support/allocation-probe.mjs')];

interface Report {
  allocated: number;
  gcMs: number;
  gcs: number;
}

runBenchmark(() => benchDatabase('bench_meetings', { migrate: false }), async (database, children) => {
  const servers = [
    ['service', SERVICE_SCRIPT],
    ...(process.env.BENCH_BASELINE ? [['baseline', process.env.BENCH_BASELINE]] : []),
    ['floor', 'bench/floor.ts'],
  ] as const;
  const targets: { label: string; url: string; pid: number; report: string }[] = [];
  for (const [label, script] of servers) {
    const report = join(tmpdir(), `bench-garbage-${process.pid}-${label}.json`);
    // The service first: it migrates the database the floor then reads.
    const env = label === 'floor' ? { DATABASE_URL: database.url } : { DATABASE_URL: database.url, ...SERVICE_ENV };
    const server = await startProcess(script, { ...env, ALLOCATION_REPORT: report }, PROBE);
    children.push(server.child);
    targets.push({ label, url: server.url, pid: server.child.pid!, report });
  }
  await seedMeetingsOnce(database);
  const { path } = await medianPersonWeek(database.db);
  const { secret, bearer } = await benchCredentials(database.db, 'meetings.list');
  const headers = CREDENTIAL === 'bearer' ? await bearer() : { 'x-api-key': secret };
  print(machineLine(`wrk -t2 -c${CONNECTIONS}, ${DURATION} s per measurement, ${ROUNDS} rounds in turn, credential: ${CREDENTIAL}`));
  for (const t of targets) await wrk(`${t.url}${path}`, { connections: CONNECTIONS, seconds: 2 * DURATION, headers });
  await settleBeforeMeasuring(database);
  await quietBefore();

  const results = new Map(targets.map((t) => [t.label, { kb: [] as number[], gc: [] as number[] }]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const t of round % 2 ? targets : [...targets].reverse()) {
      rmSync(t.report, { force: true });
      process.kill(t.pid, 'SIGUSR2'); // the probe starts counting
      await new Promise((done) => setTimeout(done, 100));
      const r = await wrk(`${t.url}${path}`, { connections: CONNECTIONS, seconds: DURATION, headers });
      process.kill(t.pid, 'SIGUSR2'); // and writes its report
      for (let waited = 0; !existsSync(t.report); waited += 50) {
        if (waited > 10_000) throw new Error(`${t.label} wrote no allocation report (is bench/support/allocation-probe.mjs preloaded?)`);
        await new Promise((done) => setTimeout(done, 50));
      }
      await new Promise((done) => setTimeout(done, 100)); // written in one call: let it finish
      const report = JSON.parse(readFileSync(t.report, 'utf8')) as Report;
      rmSync(t.report, { force: true });
      const kb = report.allocated / 1024 / r.requests;
      const gc = (report.gcMs * 1000) / r.requests;
      results.get(t.label)!.kb.push(kb);
      results.get(t.label)!.gc.push(gc);
      print(`round ${round}, ${t.label}: ${r.rps.toFixed(0)} req/s, ${kb.toFixed(1)} KB and ${gc.toFixed(1)} µs of garbage collection per request (${report.gcs} collections)`);
    }
  }
  print(
    `\n${markdownTable(
      ['one person\'s week, ' + CREDENTIAL, 'KB allocated per request', 'µs of garbage collection per request'],
      [...results].map(([label, r]) => [label, range(r.kb, (v) => v.toFixed(1)), range(r.gc, (v) => v.toFixed(1))]),
    )}`,
  );
  const service = median(results.get('service')!.kb);
  print(`service over the floor: ${(service - median(results.get('floor')!.kb)).toFixed(1)} KB per request`);
});
