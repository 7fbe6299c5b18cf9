// Where the service's CPU time goes on one hot path, per package: the service runs as production
// runs it; after a warm-up, a profiler records while wrk sends requests, and the samples are summed
// by where the function lives (a package under node_modules, a folder of src/, Node's own code,
// garbage collection). The profiler is Linux perf when it works (CPU time of every thread: see
// bench/support/perf-profile.ts), else V8's own (bench/support/profile-probe.mjs, wall-clock time
// of the main thread, which a busy machine inflates wherever the thread gets pre-empted).
// Usage: node --import tsx bench/profile.ts [users-key | users-bearer | meetings-key | meetings-bearer | tokens | sign-in] [service | floor]
// (default users-key service; `floor` profiles bench/floor.ts on the same path, to compare; sign-in
// is POST /sessions at 8 connections, as bench/sign-in.ts floods it, service only: its floor is raw
// argon2id, and argon2's own native work, in the hashing threads, is counted apart).
// PROFILE_KIND=v8: V8's CPU profiler even where perf works; PROFILE_KIND=heap: what allocates,
// from V8's sampling heap profiler, instead of CPU time; PROFILE_KIND=survivors: what of it
// outlives the young generation (what scavenges copy). BENCH_PROFILE_DRILL=<place> (perf only):
// that place's functions one by one.
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { seedMeetings } from '../src/cli/seed-meetings.js';
import { medianPersonWeek } from './support/meetings.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, createAdmin, openSessions, operatorKey } from './support/database.js';
import { markdownTable, print } from './support/measure.js';
import { writeRefreshScript } from './support/refresh.js';
import { wrk } from './support/wrk.js';
import { PERF_NODE_ARGS, cpuByFunctionIn, cpuByPlace, perfWorks, recordPerf, removeSymbols } from './support/perf-profile.js';

const PATH_KIND_ARG = process.argv[2] ?? 'users-key';
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? (PATH_KIND_ARG === 'sign-in' ? 8 : 32));
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH_KIND = PATH_KIND_ARG;
const TARGET = process.argv[3] ?? 'service';
const KIND = process.env.PROFILE_KIND ?? (perfWorks() ? 'perf' : 'v8');

interface CallFrame {
  url: string;
  functionName: string;
  lineNumber: number;
}
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}
interface HeapNode {
  id: number;
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

/** A profile as (frame, value, parent) rows: µs of self time, or bytes allocated. */
function rowsOf(profile: CpuProfile | { head: HeapNode }) {
  const rows: { id: number; frame: CallFrame; value: number; parent?: number }[] = [];
  if ('head' in profile) {
    const walk = (node: HeapNode, parent?: number) => {
      rows.push({ id: node.id, frame: node.callFrame, value: node.selfSize, parent });
      for (const child of node.children) walk(child, node.id);
    };
    walk(profile.head);
  } else {
    const self = new Map<number, number>();
    profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
    const parentOf = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
    for (const n of profile.nodes) rows.push({ id: n.id, frame: n.callFrame, value: self.get(n.id) ?? 0, parent: parentOf.get(n.id) });
  }
  return rows;
}

/**
 * Sums the rows by `key` of where their function lives. V8's built-ins (JSON.stringify, RegExp,
 * Buffer, ...) have no URL: their share is their caller's, the nearest frame up with one.
 */
function sumBy(rows: ReturnType<typeof rowsOf>, key: (frame: CallFrame) => string): Map<string, number> {
  const byId = new Map(rows.map((r) => [r.id, r]));
  const totals = new Map<string, number>();
  for (const row of rows) {
    let at = row;
    if (!row.frame.functionName.startsWith('(')) while (!at.frame.url && at.parent !== undefined && byId.has(at.parent)) at = byId.get(at.parent)!;
    const k = key(at.frame.url ? at.frame : row.frame);
    totals.set(k, (totals.get(k) ?? 0) + row.value);
  }
  return totals;
}

/** Where a function lives: `express`, `src/http`, `node:internal`, `(garbage collector)`, ... */
function place({ url, functionName }: CallFrame): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const own = /\/dist\/(src\/[^/]+|src\/[^/]+\.js)|\/(src\/[^/]+)/.exec(url);
  if (own) return (own[1] ?? own[2])!.replace(/\.js$/, '.ts');
  if (url.startsWith('node:')) return url.replace(/^node:internal\/(?:streams\/)?/, 'node:');
  return url;
}

async function main() {
  const database = await benchDatabase('bench_profile', { migrate: false });
  const dir = mkdtempSync(join(tmpdir(), 'bench-profile-'));
  const report = join(dir, 'profile.json');
  const env = { DATABASE_URL: database.url, ...SERVICE_ENV, PROFILE_REPORT: report, PROFILE_KIND: KIND };
  const probe = KIND === 'perf' ? PERF_NODE_ARGS : ['--import', resolve('bench/support/profile-probe.mjs')];
  const service = await startProcess(SERVICE_SCRIPT, env, TARGET === 'floor' ? [] : probe);
  // The floor runs on the database the service migrated.
  const floor = TARGET === 'floor' ? await startProcess('bench/floor.ts', env, probe) : undefined;
  const target = floor ?? service;
  try {
    const { db } = database;
    await seedUsers(db, { users: 1000, seed: 1 });
    const admin = await createAdmin(db);
    let options: { path: string; headers?: Record<string, string>; script?: () => string };
    if (PATH_KIND === 'tokens') {
      const sets = await openSessions(db, admin, CONNECTIONS * 2);
      const script = (half: number) => writeRefreshScript(join(dir, `refresh-${half}.lua`), sets.slice(half * CONNECTIONS, (half + 1) * CONNECTIONS));
      let half = 0;
      options = { path: '/tokens', script: () => script(half++) };
    } else if (PATH_KIND === 'sign-in') {
      if (TARGET === 'floor') throw new Error('sign-in has no floor app: its reference is raw argon2id (bench/sign-in.ts)');
      // Every sign-in succeeds and clears its pair's failures, so the throttle never refuses one.
      const file = join(dir, 'sign-in.lua');
      const body = JSON.stringify({ session: { email: admin.email, password: 'benchmark passphrase 1234' } });
      writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${body}'\n`);
      options = { path: '/sessions', script: () => file };
    } else if (PATH_KIND === 'meetings-key' || PATH_KIND === 'meetings-bearer') {
      // One person's week (bench/meetings-week.ts) among BENCH_MEETINGS meetings (20,000: the
      // Node side of the request does not depend on how many are stored, the database's does).
      await seedMeetings(db, { meetings: Number(process.env.BENCH_MEETINGS ?? 20_000), seed: 1 });
      await sql`vacuum analyze`.execute(db);
      const { path } = await medianPersonWeek(db);
      if (PATH_KIND === 'meetings-bearer') {
        const [session] = await openSessions(db, admin, 1);
        options = { path, headers: { authorization: `Bearer ${session!.access_token}` } };
      } else {
        const { secret } = await operatorKey(db, { name: 'bench', permissions: ['meetings.list'] });
        options = { path, headers: { 'x-api-key': secret } };
      }
    } else if (PATH_KIND === 'users-bearer') {
      const [session] = await openSessions(db, admin, 1);
      options = { path: '/users?limit=50', headers: { authorization: `Bearer ${session!.access_token}` } };
    } else {
      const { secret } = await operatorKey(db, { name: 'bench', permissions: ['users.list'] });
      options = { path: '/users?limit=50', headers: { 'x-api-key': secret } };
    }
    const run = (seconds: number) => wrk(`${target.url}${options.path}`, { connections: CONNECTIONS, seconds, headers: options.headers, script: options.script?.() });
    await run(WARM_UP);
    if (KIND === 'perf') {
      let answered = 0;
      const script = await recordPerf(target.child.pid!, join(dir, 'perf.data'), async () => {
        const r = await run(DURATION);
        answered = r.requests;
        print(`${TARGET}, ${PATH_KIND}: ${options.path}, ${r.requests} requests in ${DURATION} s (${r.rps.toFixed(0)}/s, failures ${r.failures})`);
      });
      if (process.env.BENCH_PROFILE_KEEP) writeFileSync(process.env.BENCH_PROFILE_KEEP, script); // the samples, for a closer look
      const totals = cpuByPlace(script);
      const all = [...totals.values()].reduce((a, b) => a + b, 0);
      print(`CPU of the process (every thread), from perf: ${((all * 1000) / answered).toFixed(0)} µs per request`);
      const rows = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([where, ms]) => [where, ((ms * 1000) / answered).toFixed(1), `${((ms / all) * 100).toFixed(1)} %`]);
      print(markdownTable(['where (innermost JavaScript function, with what it called)', 'µs of CPU per request', 'share'], rows));
      // BENCH_PROFILE_DRILL=src/http: that place's functions one by one.
      const drill = process.env.BENCH_PROFILE_DRILL;
      if (drill) {
        const inside = [...cpuByFunctionIn(script, drill).entries()].filter(([k]) => !totals.has(k) || k === drill).sort((a, b) => b[1] - a[1]);
        print(`\n${drill}, by function:\n${markdownTable(['function', 'µs of CPU per request'], inside.slice(0, 25).map(([k, ms]) => [k, ((ms * 1000) / answered).toFixed(1)]))}`);
      }
      return;
    }
    rmSync(report, { force: true });
    target.child.kill('SIGUSR2');
    const r = await run(DURATION);
    target.child.kill('SIGUSR2');
    while (!existsSync(report)) await new Promise((done) => setTimeout(done, 100));
    await new Promise((done) => setTimeout(done, 500)); // the file is written in one call; let it finish
    const profile = JSON.parse(readFileSync(report, 'utf8')) as CpuProfile | { head: HeapNode };
    const rows = rowsOf(profile);
    const totals = sumBy(rows, place);
    totals.delete('(idle)');
    const all = [...totals.values()].reduce((a, b) => a + b, 0);
    const heap = 'head' in profile;
    const unit = heap ? 'bytes allocated per request' : 'µs of self time per request';
    print(
      `${TARGET}, ${PATH_KIND}: ${options.path}, ${r.requests} requests in ${DURATION} s (${r.rps.toFixed(0)}/s, failures ${r.failures}); ` +
        (heap ? `${(all / 1024 / r.requests).toFixed(1)} KB allocated per request (sampled)` : `main thread busy ${(all / r.requests).toFixed(0)} µs per request (sampled, with the profiler's own overhead)`),
    );
    const table = (sums: Map<string, number>, limit: number) =>
      [...sums.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, limit)
        .map(([where, v]) => [where, (v / r.requests).toFixed(heap ? 0 : 1), `${((v / all) * 100).toFixed(1)} %`]);
    print(markdownTable(['where', unit, 'share'], table(totals, 40)));
    const functions = sumBy(rows, (f) => `${f.functionName || '(anonymous)'} ${place(f)}:${f.lineNumber + 1}`);
    functions.delete('(idle) (idle):0');
    print(`\ntop functions:\n${markdownTable(['function', unit, 'share'], table(functions, Number(process.env.BENCH_PROFILE_TOP ?? 30)))}`);
    const file = join(dir, `${TARGET}.${heap ? 'heapprofile' : 'cpuprofile'}`);
    writeFileSync(file, JSON.stringify(profile));
    print(`profile: ${file} (open in Chrome DevTools)`);
  } finally {
    if (floor) await stopProcess(floor.child);
    await stopProcess(service.child);
    if (KIND === 'perf') removeSymbols(target.child.pid!);
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
