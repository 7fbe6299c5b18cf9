// Garbage per request: how many bytes the service's JavaScript heap allocates to answer one request
// on each hot path (GET /users?limit=50 with an API key and with a bearer token, POST /tokens), and
// how many collections that costs. The service runs as production runs it, with
// bench/support/allocation-probe.mjs preloaded; after a warm-up, the probe counts while wrk sends
// requests for BENCH_DURATION seconds. To compare with another build (before a change), point
// BENCH_SERVICE_SCRIPT at its main.js: the service migrates the database itself here.
// Usage: node --import tsx bench/allocation.ts [service | floor] (`floor`: bench/floor.ts, to compare)
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, createAdmin, openSessions, operatorKey } from './support/database.js';
import { markdownTable, print } from './support/measure.js';
import { refreshScripts } from './support/refresh.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const TARGET = process.argv[2] ?? 'service';

async function main() {
  const database = await benchDatabase('bench_allocation', { migrate: false });
  const dir = mkdtempSync(join(tmpdir(), 'bench-allocation-'));
  const report = join(dir, 'report.json');
  const env = { DATABASE_URL: database.url, ...SERVICE_ENV, ALLOCATION_REPORT: report };
  const probe = ['--import', resolve('bench/support/allocation-probe.mjs')];
  const service = await startProcess(SERVICE_SCRIPT, env, TARGET === 'floor' ? [] : probe);
  // The floor runs on the database the service migrated.
  const floor = TARGET === 'floor' ? await startProcess('bench/floor.ts', env, probe) : undefined;
  const target = floor ?? service;
  try {
    const { db } = database;
    await seedUsers(db, { users: 1000, seed: 1 });
    const { secret } = await operatorKey(db, { name: 'bench', permissions: ['users.list'] });
    const admin = await createAdmin(db);
    const [session] = await openSessions(db, admin, 1);

    const cases: { label: string; path: string; headers?: Record<string, string>; script?: () => Promise<string> }[] = [
      { label: 'GET /users?limit=50, API key', path: '/users?limit=50', headers: { 'x-api-key': secret } },
      { label: 'GET /users?limit=50, bearer', path: '/users?limit=50', headers: { authorization: `Bearer ${session!.access_token}` } },
      { label: 'POST /tokens', path: '/tokens', script: refreshScripts(db, admin, CONNECTIONS) },
    ];
    print(`${TARGET === 'floor' ? 'bench/floor.ts' : SERVICE_SCRIPT}; wrk -c${CONNECTIONS}, ${WARM_UP} s warm-up, then ${DURATION} s counted per path`);
    const rows: string[][] = [];
    for (const c of cases) {
      const options = async (seconds: number) => ({ connections: CONNECTIONS, seconds, headers: c.headers, script: await c.script?.() });
      await wrk(`${target.url}${c.path}`, await options(WARM_UP));
      rmSync(report, { force: true });
      target.child.kill('SIGUSR2');
      const r = await wrk(`${target.url}${c.path}`, await options(DURATION));
      target.child.kill('SIGUSR2');
      while (!existsSync(report)) await new Promise((done) => setTimeout(done, 50));
      const { allocated, gcs, gcMs, byType } = JSON.parse(readFileSync(report, 'utf8')) as { allocated: number; gcs: number; gcMs: number; byType: Record<string, { count: number; ms: number }> };
      print(`  ${c.label}: ${Object.entries(byType).map(([type, t]) => `${type} ${t.count}× ${(t.ms / t.count).toFixed(2)} ms`).join(', ')}`);
      const line = [c.label, (allocated / r.requests / 1024).toFixed(1), ((gcs * 1000) / r.requests).toFixed(1), ((gcMs * 1000) / r.requests).toFixed(0), String(r.requests), String(r.failures)];
      print(`  ${line.join(' | ')}`);
      rows.push(line);
    }
    print('');
    print(markdownTable(['path', 'KB allocated per request', 'collections per 1000 requests', 'GC pause µs per request', 'requests', 'failures'], rows));
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
