// Sign-in benchmark, in one run on one machine:
//  1. raw argon2id verification throughput with the service's parameters (the ceiling);
//  2. POST /sessions throughput through the whole service (HTTP, validation, throttle check,
//     verification, session insert) at the same concurrency; target >= 80 % of (1);
//  3. p99 latency of an authenticated request (GET /me) while a sign-in flood runs; target < 50 ms.
// Usage: npx tsx bench/sign-in.ts [seconds per phase, default 10]
// Uses DATABASE_URL when set (a database it may create tables in), else a throwaway PostgreSQL 15.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { verify } from '@node-rs/argon2';
import { startCluster, withDatabase } from '../test/support/postgres.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Database } from '../src/db/schema.js';
import { createApp } from '../src/app.js';
import { loadSpec } from '../src/contract/spec.js';
import { createLogger } from '../src/logger.js';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/clock.js';
import { createHandlers } from '../src/handlers/index.js';
import { createAuthenticators } from '../src/auth/authenticators.js';
import { hashPassword } from '../src/auth/passwords.js';
import { createUserWithPassword } from '../src/users/credentials.js';

const SECONDS = Number(process.argv[2] ?? 10);
const CONCURRENCY = 8;
const PASSWORD = 'a benchmark password of decent length';
const say = (line: string) => process.stdout.write(`${line}\n`);

async function forDuration(concurrency: number, seconds: number, work: () => Promise<void>): Promise<number> {
  let done = 0;
  const until = Date.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await work();
        done += 1;
      }
    }),
  );
  return done / seconds;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
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
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  try {
    await migrateToLatest(db);
    const email = `bench-${Date.now()}@example.com`;
    await createUserWithPassword(db, { email, firstName: 'Bench', lastName: 'Mark', password: PASSWORD, roles: ['admin'] });
    const config = loadConfig({ NODE_ENV: 'production', LOG_LEVEL: 'warn', SIGN_IN_MAX_FAILURES_PER_IP: '1000000' });
    const logger = createLogger('warn');
    const deps = { db, clock: systemClock, logger, config };
    const app = createApp({
      spec: loadSpec(),
      db,
      logger,
      handlers: createHandlers(deps),
      authenticators: createAuthenticators(deps),
      options: { validateResponses: false, trustProxy: false, bodyLimitBytes: config.bodyLimitBytes },
    });
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const signIn = async () => {
      const res = await fetch(`${base}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session: { email, password: PASSWORD } }),
      });
      if (res.status !== 201) throw new Error(`sign-in answered ${res.status}`);
      return (await res.json()) as { access_token: string };
    };

    // Warm up both paths (JIT, pool connections, the dummy hash).
    const stored = await hashPassword(PASSWORD);
    for (let i = 0; i < 4; i++) await verify(stored, PASSWORD);
    const { access_token } = await signIn();

    // Interleaved one-second slices, so both sides see the same background load of a shared machine.
    let rawTotal = 0;
    let serviceTotal = 0;
    for (let slice = 0; slice < SECONDS; slice++) {
      rawTotal += await forDuration(CONCURRENCY, 1, async () => {
        if (!(await verify(stored, PASSWORD))) throw new Error('verify failed');
      });
      serviceTotal += await forDuration(CONCURRENCY, 1, async () => {
        await signIn();
      });
    }
    const raw = rawTotal / SECONDS;
    const service = serviceTotal / SECONDS;

    const latencies: number[] = [];
    let flooding = true;
    const flood = forDuration(CONCURRENCY, SECONDS, async () => {
      await signIn();
    }).then((rate) => {
      flooding = false;
      return rate;
    });
    while (flooding) {
      const started = performance.now();
      const res = await fetch(`${base}/me`, { headers: { authorization: `Bearer ${access_token}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`GET /me answered ${res.status}`);
      latencies.push(performance.now() - started);
    }
    const floodRate = await flood;
    server.close();

    const ratio = service / raw;
    const p50 = percentile(latencies, 50);
    const p99 = percentile(latencies, 99);
    say(`machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}, UV_THREADPOOL_SIZE=${process.env.UV_THREADPOOL_SIZE ?? 4}`);
    say(`argon2id m=19456 KiB t=2 p=1, concurrency ${CONCURRENCY}, ${SECONDS} interleaved 1 s slices each, then a ${SECONDS} s flood`);
    say(`load average before: ${loadBefore.map((l) => l.toFixed(2)).join(' ')}`);
    say(`raw argon2id verify:      ${raw.toFixed(1)} /s`);
    say(`POST /sessions (201):     ${service.toFixed(1)} /s   ratio ${(ratio * 100).toFixed(1)} %  (target >= 80 %) ${ratio >= 0.8 ? 'PASS' : 'FAIL'}`);
    say(`GET /me during flood:     p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length} requests (flood ${floodRate.toFixed(1)} sign-ins/s)  (target p99 < 50 ms) ${p99 < 50 ? 'PASS' : 'FAIL'}`);
  } finally {
    await db.destroy();
    cluster?.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
