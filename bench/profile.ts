// Where the service's CPU time goes on one hot path, per package: the service runs as production
// runs it with bench/support/profile-probe.mjs preloaded; after a warm-up, V8's sampling profiler
// records while wrk sends requests, and the samples' self time is summed by where the function
// lives (a package under node_modules, a folder of src/, Node's own code, garbage collection).
// Usage: node --import tsx bench/profile.ts [users-key | users-bearer | tokens] [service | floor]
// (default users-key service; `floor` profiles bench/floor.ts on the same path, to compare).
import { mkdtempSync, readFileSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedUsers } from '../src/cli/seed.js';
import { apiKeyService } from '../src/api-keys/service.js';
import { systemClock } from '../src/clock.js';
import { SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, createAdmin, openSessions } from './support/database.js';
import { markdownTable, print } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH_KIND = process.argv[2] ?? 'users-key';
const TARGET = process.argv[3] ?? 'service';

interface Profile {
  nodes: { id: number; callFrame: { url: string; functionName: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a function lives: `express`, `src/http`, `node:internal`, `(garbage collector)`, ... */
function place(url: string, functionName: string): string {
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
  const env = { DATABASE_URL: database.url, NODE_ENV: 'production', VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'info', DB_POOL_MAX: '10', PROFILE_REPORT: report };
  const probe = ['--import', resolve('bench/support/profile-probe.mjs')];
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
      const template = readFileSync('bench/refresh.lua', 'utf8');
      const sets = await openSessions(db, admin, CONNECTIONS * 2);
      const script = (half: number) => {
        const file = join(dir, `refresh-${half}.lua`);
        const mine = sets.slice(half * CONNECTIONS, (half + 1) * CONNECTIONS);
        writeFileSync(file, `sets = {\n${mine.map((s) => `  "${s.access_token} ${s.refresh_token}",`).join('\n')}\n}\n${template}`);
        return file;
      };
      let half = 0;
      options = { path: '/tokens', script: () => script(half++) };
    } else if (PATH_KIND === 'users-bearer') {
      const [session] = await openSessions(db, admin, 1);
      options = { path: '/users?limit=50', headers: { authorization: `Bearer ${session!.access_token}` } };
    } else {
      const { secret } = await apiKeyService(db, systemClock).create({ userId: null, permissions: 'all' }, { name: 'bench', permissions: ['users.list'] });
      options = { path: '/users?limit=50', headers: { 'x-api-key': secret } };
    }
    const run = (seconds: number) => wrk(`${target.url}${options.path}`, { connections: CONNECTIONS, seconds, headers: options.headers, script: options.script?.() });
    await run(WARM_UP);
    rmSync(report, { force: true });
    target.child.kill('SIGUSR2');
    const r = await run(DURATION);
    target.child.kill('SIGUSR2');
    while (!existsSync(report)) await new Promise((done) => setTimeout(done, 100));
    await new Promise((done) => setTimeout(done, 500)); // the file is written in one call; let it finish
    const profile = JSON.parse(readFileSync(report, 'utf8')) as Profile;
    // V8's built-ins (JSON.stringify, RegExp, Buffer, ...) have no URL: their time is their
    // caller's, i.e. of the nearest frame up the stack that has one.
    const parentOf = new Map<number, number>();
    for (const n of profile.nodes) for (const child of n.children ?? []) parentOf.set(child, n.id);
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const placeOf = new Map(
      profile.nodes.map((n) => {
        let at: (typeof profile.nodes)[number] | undefined = n;
        if (!n.callFrame.functionName.startsWith('(')) {
          while (at && !at.callFrame.url && parentOf.has(at.id)) at = byId.get(parentOf.get(at.id)!);
        }
        return [n.id, place(at?.callFrame.url ?? '', at?.callFrame.functionName ?? n.callFrame.functionName)];
      }),
    );
    const totals = new Map<string, number>();
    profile.samples.forEach((id, i) => {
      const where = placeOf.get(id)!;
      totals.set(where, (totals.get(where) ?? 0) + (profile.timeDeltas[i] ?? 0));
    });
    const idle = totals.get('(idle)') ?? 0;
    const busy = [...totals.values()].reduce((a, b) => a + b, 0) - idle;
    print(`${TARGET}, ${PATH_KIND}: ${options.path}, ${r.requests} requests in ${DURATION} s (${r.rps.toFixed(0)}/s, failures ${r.failures}); main thread busy ${(busy / r.requests).toFixed(0)} µs per request (sampled, with the profiler's own overhead)`);
    const rows = [...totals.entries()]
      .filter(([where]) => where !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .map(([where, us]) => [where, (us / r.requests).toFixed(1), `${((us / busy) * 100).toFixed(1)} %`]);
    print(markdownTable(['where (self time)', 'µs per request', 'share'], rows));
    writeFileSync(join(dir, `${TARGET}.cpuprofile`), JSON.stringify(profile));
    print(`profile: ${join(dir, `${TARGET}.cpuprofile`)} (open in Chrome DevTools)`);
  } finally {
    if (floor) await stopProcess(floor.child);
    await stopProcess(service.child);
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
