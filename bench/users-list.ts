// Benchmark of GET /users?limit=50 (see docs/BENCHMARKS.md for how to run it and the results).
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL), migrated, seeded with 100,000 users;
//  2. the real service (dist/src/main.js as `make run` starts it, NODE_ENV=production, response validation off, access logs
//     on) in its own process, called with an API key holding users.list; then with a bearer token
//     when sign-in exists;
//  3. in the same run, a bare Express app in its own process returning the same 50 users from memory;
//  4. then the table grows past 1,000,000 users and the first page is compared with the page that
//     starts after the millionth user.
// Each server and the load generator (wrk) run in separate processes: the client does not share an event loop with a server.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir, cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { seedUsers } from '../src/cli/seed.js';
import { apiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { encodeCursor } from '../src/users/cursor.js';
import { hashPassword } from '../src/auth/passwords.js';
import { systemClock } from '../src/clock.js';
import { startCluster, withDatabase } from '../test/support/postgres.js';
import { wrk } from './support/wrk.js';
import { SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { countCpu, childPids, parentPid } from './support/cpu.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const DEEP = Number(process.env.BENCH_DEEP ?? 1_000_000);
// Seconds of load before each measurement: V8 is still optimising the service's code for the first few seconds.
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 5);
const print = (line: string) => process.stdout.write(`${line}\n`);

interface Measure {
  label: string;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  failures: number;
}

/** Processes whose CPU is accounted during each measurement (filled in by main). */
const accounted: Record<string, () => number[]> = {};

async function measure(label: string, url: string, headers: Record<string, string> = {}, connections = CONNECTIONS): Promise<Measure> {
  await wrk(url, { connections, seconds: WARM_UP, headers }); // warm-up: JIT, pools, caches, connections
  const stop = countCpu(accounted);
  const r = await wrk(url, { connections, seconds: DURATION, headers });
  const cpu = stop();
  const m = { label, ...r };
  const perRequest = (seconds: number) => ((seconds * 1000) / r.requests).toFixed(2);
  const groups = Object.entries(cpu.groups).map(([name, seconds]) => `${name} ${((seconds / DURATION) * 100).toFixed(0)} % (${perRequest(seconds)} ms/req)`);
  print(`  ${label.padEnd(44)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${m.p50.toFixed(1)} ms   p99 ${m.p99.toFixed(1)} ms   mean ${m.mean.toFixed(2)} ms   failures ${m.failures}`);
  print(`  ${''.padEnd(44)} CPU of one core: ${groups.join(', ')}; machine ${((cpu.machineBusy / cpu.machineCapacity) * 100).toFixed(0)} % busy of ${cpus().length} cores (${((cpu.machineSteal / cpu.machineCapacity) * 100).toFixed(0)} % stolen by the host), load ${cpu.loadAverage.toFixed(1)}`);
  return m;
}

async function main() {
  const cluster = process.env.DATABASE_URL ? undefined : await startCluster();
  const adminUrl = process.env.DATABASE_URL ?? cluster!.adminUrl;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query('drop database if exists bench_users');
  await admin.query('create database bench_users');
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, 'bench_users');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  pool.on('error', () => {}); // idle connections dropped when the cluster stops
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const children: ChildProcess[] = [];
  try {
    await migrateToLatest(db);
    let t = Date.now();
    await seedUsers(db, { users: USERS, seed: 1 });
    await sql`vacuum analyze users`.execute(db);
    print(`seeded ${USERS} users in ${((Date.now() - t) / 1000).toFixed(1)} s`);

    const { secret } = await apiKeyService({ db, clock: systemClock }).create(OPERATOR, { name: 'bench', permissions: ['users.list'] });
    const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: databaseUrl, NODE_ENV: 'production', VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'info', DB_POOL_MAX: '10' });
    children.push(service.child);
    const page = await fetch(`${service.url}/users?limit=50`, { headers: { 'x-api-key': secret } });
    if (page.status !== 200) throw new Error(`GET /users answered ${page.status}: ${await page.text()}`);
    const dir = mkdtempSync(join(tmpdir(), 'bench-'));
    writeFileSync(join(dir, 'users.json'), await page.text());
    const bare = await startProcess('bench/bare-express.ts', { USERS_JSON_FILE: join(dir, 'users.json') });
    children.push(bare.child);
    const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
    const postmaster = parentPid(backend.rows[0]!.pid);
    accounted.service = () => [service.child.pid!];
    accounted.bare = () => [bare.child.pid!];
    accounted.PostgreSQL = () => childPids(postmaster);
    print(`machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    print('load generator: wrk (a C process of its own), 2 threads; service: node dist/src/main.js, NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null');

    // The bearer path: an admin signed in through POST /sessions.
    const password = 'benchmark passphrase 1234';
    const adminRole = await db.selectFrom('roles').select('id').where('name', '=', 'admin').executeTakeFirstOrThrow();
    const user = await db.insertInto('users').values({ email: 'bench-admin@example.com', first_name: 'Bench', last_name: 'Admin', password_hash: await hashPassword(password) }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('user_roles').values({ user_id: user.id, role_id: adminRole.id }).execute();
    const signIn = await fetch(`${service.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: { email: 'bench-admin@example.com', password } }) });
    if (signIn.status !== 201) throw new Error(`POST /sessions answered ${signIn.status}`);
    const { access_token } = (await signIn.json()) as { access_token: string };

    // Rounds of (bare, API key, bearer): the load of a shared machine changes within a minute, so
    // each ratio compares measurements taken seconds apart; the median round is the result.
    print(`\nGET /users?limit=50, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per side (each after a ${WARM_UP} s warm-up), ${USERS} users`);
    const rounds: { key: number; bearer: number; keyP99: number; bearerP99: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      print(`round ${round}`);
      const baseline = await measure('bare Express, 50 users from memory', `${bare.url}/users`);
      const withKey = await measure('service, x-api-key, PostgreSQL', `${service.url}/users?limit=50`, { 'x-api-key': secret });
      const withBearer = await measure('service, bearer token, PostgreSQL', `${service.url}/users?limit=50`, { authorization: `Bearer ${access_token}` });
      rounds.push({ key: withKey.rps / baseline.rps, bearer: withBearer.rps / baseline.rps, keyP99: withKey.p99, bearerP99: withBearer.p99 });
      print(`  ratio: API key ${((withKey.rps / baseline.rps) * 100).toFixed(1)} %, bearer ${((withBearer.rps / baseline.rps) * 100).toFixed(1)} % of the bare throughput`);
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    print(`median over ${ROUNDS} rounds: API key ${(median(rounds.map((r) => r.key)) * 100).toFixed(1)} % of the bare throughput (target >= 50 %), p99 ${median(rounds.map((r) => r.keyP99)).toFixed(1)} ms (target < 25 ms)`);
    print(`                      bearer  ${(median(rounds.map((r) => r.bearer)) * 100).toFixed(1)} % of the bare throughput, p99 ${median(rounds.map((r) => r.bearerP99)).toFixed(1)} ms`);

    if (DEEP <= 0) return; // BENCH_DEEP=0: throughput only (quicker, for profiling)
    t = Date.now();
    const total = Number((await db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    await seedUsers(db, { users: DEEP + 100 - total, seed: 2 });
    await sql`vacuum analyze users`.execute(db);
    print(`\ngrew the table to ${DEEP + 100} users in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    const deep = await sql<{ t: string; id: string }>`
      select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as t, id
      from users order by created_at, id offset ${DEEP - 1} limit 1`.execute(db);
    const { secret: cursorKey } = await db.selectFrom('service_secrets').select('secret').where('name', '=', 'cursor_signing').executeTakeFirstOrThrow();
    const cursor = encodeCursor(cursorKey, { createdAt: deep.rows[0]!.t, id: deep.rows[0]!.id }, {});
    print(`GET /users?limit=50: first page vs the page after user ${DEEP}, x-api-key, ${CONNECTIONS} connections`);
    const first = await measure('first page', `${service.url}/users?limit=50`, { 'x-api-key': secret });
    const far = await measure(`page after ${DEEP} users`, `${service.url}/users?limit=50&cursor=${cursor}`, { 'x-api-key': secret });
    print(`  cost ratio (deep / first, mean latency): ${(far.mean / first.mean).toFixed(2)}x (target <= 1.3x); throughput ratio ${(first.rps / far.rps).toFixed(2)}x`);
  } finally {
    await Promise.all(children.map(stopProcess));
    await db.destroy();
    cluster?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
