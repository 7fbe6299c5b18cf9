// Sign-in benchmark (see docs/BENCHMARKS.md for how to run it and the results), in one run:
//  1. raw argon2id verification with the service's parameters at concurrency 8 in this process
//     (the ceiling), and POST /sessions through the real service at 8 connections, in alternating
//     2-second slices so both see the same background load; target: service >= 80 % of raw;
//  2. the p99 latency of GET /me (bearer token, one request at a time) while 8 connections flood
//     POST /sessions; target < 50 ms.
// The service runs in its own process as in production (dist/src/main.js, NODE_ENV=production,
// response validation off, LOG_LEVEL=info, access log to /dev/null); the load comes from wrk, a C
// program in its own process, so no client work is done on the service's event loop.
// Usage: node --import tsx bench/sign-in.ts [seconds per side, default 10]
// Uses DATABASE_URL when set (a database it may create tables in), else a throwaway PostgreSQL 15.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { verify } from '@node-rs/argon2';
import { startCluster, withDatabase } from '../test/support/postgres.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/schema.js';
import { HASH_THREADS, HASH_THREAD_NICE, hashPassword } from '../src/auth/secrets/passwords.js';
import { createUserWithPassword } from '../src/users/credentials.js';
import { wrk } from './support/wrk.js';
import { loadAverages, machineLine } from './support/measure.js';
import { BENCH_SEALING_KEYS, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { countCpu, childPids, parentPid, type CpuUsage } from './support/cpu.js';

const SECONDS = Number(process.argv[2] ?? 10);
const SLICE = 2;
// V8 keeps optimising the request path for several seconds after start (the platform threads'
// TurboFan work was ~0.7 ms per sign-in 5 s in): measure the steady state, as bench/users-list.ts does.
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const CONCURRENCY = 8;
const PASSWORD = 'a benchmark password of decent length';
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Verifications finished within `seconds`: counted like wrk counts answers, the ones still running at the end are not. */
async function verifications(seconds: number, stored: string): Promise<number> {
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        if (!(await verify(stored, PASSWORD))) throw new Error('verify failed');
        if (Date.now() <= until) done += 1;
      }
    }),
  );
  return done;
}

async function main() {
  const loadBefore = loadavg();
  let url = process.env.DATABASE_URL;
  const cluster = url ? undefined : await startCluster();
  if (cluster) {
    const admin = new pg.Client({ connectionString: cluster.adminUrl });
    await admin.connect();
    await admin.query('create database bench');
    await admin.end();
    url = withDatabase(cluster.adminUrl, 'bench');
  }
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on('error', () => {}); // idle connections dropped when the cluster stops
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let service: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    await migrateToLatest(db);
    const email = `bench-${Date.now()}@example.com`;
    await createUserWithPassword(db, { email, firstName: 'Bench', lastName: 'Mark', password: PASSWORD, roles: ['admin'] });
    // The benchmark's person is an administrator without a second factor (the sign-in whose
    // throughput must not drop): optional, so that GET /me answers 200 rather than 403
    // second_factor_required. Signing in itself is the same either way.
    service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: url!, NODE_ENV: 'production', VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'info', ADMIN_SECOND_FACTOR: 'optional', SEALING_KEYS: BENCH_SEALING_KEYS, MAIL_OUTBOX_ONLY: 'true' });
    const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
    const postmaster = parentPid(backend.rows[0]!.pid);
    const servicePid = service.child.pid!;
    const accounted = { service: () => [servicePid], PostgreSQL: () => childPids(postmaster), 'raw (this process)': () => [process.pid] };

    const body = JSON.stringify({ session: { email, password: PASSWORD } });
    const script = join(mkdtempSync(join(tmpdir(), 'bench-sign-in-')), 'sign-in.lua');
    writeFileSync(script, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${body}'\n`);
    const signIn = await fetch(`${service.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (signIn.status !== 201) throw new Error(`sign-in answered ${signIn.status}: ${await signIn.text()}`);
    const { access_token } = (await signIn.json()) as { access_token: string };

    // Warm up both paths (JIT, pool connections, the dummy hash).
    const stored = await hashPassword(PASSWORD);
    await verifications(1, stored);
    await wrk(`${service.url}/sessions`, { connections: CONCURRENCY, seconds: WARM_UP, script });

    let raw = 0;
    let signIns = 0;
    let failures = 0;
    const cpuRaw: CpuUsage[] = [];
    const cpuService: CpuUsage[] = [];
    for (let elapsed = 0; elapsed < SECONDS; elapsed += SLICE) {
      let stop = countCpu(accounted);
      raw += await verifications(SLICE, stored);
      cpuRaw.push(stop());
      stop = countCpu(accounted);
      const r = await wrk(`${service.url}/sessions`, { connections: CONCURRENCY, seconds: SLICE, script });
      cpuService.push(stop());
      signIns += r.requests - r.failures;
      failures += r.failures;
    }
    const rawRate = raw / SECONDS;
    const serviceRate = signIns / SECONDS;
    const ratio = serviceRate / rawRate;

    const stopFlood = countCpu(accounted);
    const [flood, me] = await Promise.all([
      wrk(`${service.url}/sessions`, { connections: CONCURRENCY, seconds: SECONDS, script }),
      wrk(`${service.url}/me`, { connections: 1, threads: 1, seconds: SECONDS, headers: { authorization: `Bearer ${access_token}` } }),
    ]);
    const cpuFlood = stopFlood();

    const cpuLine = (usages: CpuUsage[], seconds: number, count: number) => {
      const group = (name: string) => usages.reduce((sum, u) => sum + (u.groups[name] ?? 0), 0);
      const busy = usages.reduce((sum, u) => sum + u.machineBusy, 0);
      const capacity = usages.reduce((sum, u) => sum + u.machineCapacity, 0);
      const steal = usages.reduce((sum, u) => sum + u.machineSteal, 0);
      const parts = Object.keys(accounted).map((name) => `${name} ${((group(name) / seconds) * 100).toFixed(0)} % (${((group(name) * 1000) / count).toFixed(1)} ms each)`);
      return `CPU of one core: ${parts.join(', ')}; machine ${((busy / capacity) * 100).toFixed(0)} % busy (${((steal / capacity) * 100).toFixed(0)} % stolen by the host)`;
    };
    say(machineLine(`raw: libuv pool of UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4} threads; service: ${HASH_THREADS} hashing threads at nice +${HASH_THREAD_NICE}`));
    say(`argon2id m=19456 KiB t=2 p=1, concurrency ${CONCURRENCY}, after a ${WARM_UP} s warm-up of the service: ${SECONDS / SLICE} alternating ${SLICE} s slices each, then a ${SECONDS} s flood; load generator wrk`);
    say(`load average before: ${loadAverages(loadBefore)}, after: ${loadAverages()}`);
    say(`raw argon2id verify:      ${rawRate.toFixed(1)} /s`);
    say(`    ${cpuLine(cpuRaw, SECONDS, raw)}`);
    say(`POST /sessions (201):     ${serviceRate.toFixed(1)} /s   (failures ${failures})   ratio ${(ratio * 100).toFixed(1)} %  (target >= 80 %) ${ratio >= 0.8 ? 'PASS' : 'FAIL'}`);
    say(`    ${cpuLine(cpuService, SECONDS, signIns)}`);
    say(`GET /me during flood:     p50 ${me.p50.toFixed(1)} ms, p99 ${me.p99.toFixed(1)} ms over ${me.requests} requests (failures ${me.failures}); flood ${flood.rps.toFixed(1)} sign-ins/s (failures ${flood.failures})  (target p99 < 50 ms) ${me.p99 < 50 ? 'PASS' : 'FAIL'}`);
    say(`    ${cpuLine([cpuFlood], SECONDS, flood.requests)}`);
  } finally {
    if (service) await stopProcess(service.child);
    await db.destroy();
    cluster?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
