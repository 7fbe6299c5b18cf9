// What a key's rate limit costs the hot path: GET /users?limit=50 with a rate-limited
// key whose limit is far above the load (1,000,000 requests per second: never refused, decided in
// memory, reconciled in the background every RATE_LIMIT_SYNC_INTERVAL_MS as in production) side
// by side with the same request with an unlimited key, on the same service process and database.
// docs/PARTNER-KEYS.md promises the limited key within 3 % of the unlimited one.
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL), seeded with BENCH_USERS users; the service in
//     its own process (BENCH_SERVICE_SCRIPT, dist/src/main.js by default, as `npm start` starts it);
//  2. both keys' answers checked (200, the same page; the limited one with its RateLimit headers);
//  3. BENCH_ROUNDS rounds, seconds apart, each measuring both keys for BENCH_DURATION seconds with
//     BENCH_CONNECTIONS clients (wrk: a C program in its own process), in alternating order, so each
//     ratio compares measurements under the same load; a round where the limited key met a 429 or
//     any non-2xx fails the run.
// Prints a markdown table at the end (docs/BENCHMARKS.md, "Rate-limited key").
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, settleBeforeMeasuring, operatorKey } from './support/database.js';
import { describe, loadAverages, machineLine, markdownTable, measure, medianOf, percent, print, range, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH = '/users?limit=50';
/** Far above any load one machine sends: the limiter decides every request in memory. */
const LIMIT = { requests: 1_000_000, per_seconds: 1 };

async function main() {
  const database = await benchDatabase('bench_rate_limited', { migrate: false });
  const { db } = database;
  let service: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
    await seedUsers(db, { users: USERS, seed: 1 });
    await sql`vacuum analyze users`.execute(db);
    const unlimited = (await operatorKey(db, { name: 'bench unlimited', permissions: ['users.list'] })).secret;
    const limited = (await operatorKey(db, { name: 'bench limited', permissions: ['users.list'], rate_limit: LIMIT })).secret;

    // Both answer the same page; only the limited one carries the RateLimit headers.
    const answer = async (secret: string) => {
      const res = await fetch(`${service!.url}${PATH}`, { headers: { 'x-api-key': secret } });
      return { status: res.status, policy: res.headers.get('ratelimit-policy'), body: await res.text() };
    };
    const [free, fenced] = [await answer(unlimited), await answer(limited)];
    if (free.status !== 200 || fenced.status !== 200 || free.body !== fenced.body) throw new Error(`the two keys answer differently: ${free.status} ${fenced.status}`);
    if (free.policy !== null || fenced.policy !== `"api-key";q=${LIMIT.requests};w=${LIMIT.per_seconds}`) throw new Error(`unexpected RateLimit-Policy: ${free.policy} / ${fenced.policy}`);
    print(`same page for both keys (${free.body.length} bytes); the limited one says RateLimit-Policy: ${fenced.policy}`);

    const target: Target = { pid: service.child.pid!, postmaster: database.postmaster };
    const run = (label: string, secret: string) => measure(label, `${service!.url}${PATH}`, target, { connections: CONNECTIONS, seconds: DURATION, headers: { 'x-api-key': secret } });
    print(machineLine(`wrk -c${CONNECTIONS}; service: ${SERVICE_SCRIPT}, NODE_ENV=production, DB_POOL_MAX=10, ${USERS} users`, { load: true }));
    print(`warming up for ${WARM_UP} s per key`);
    for (const secret of [unlimited, limited]) await wrk(`${service.url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers: { 'x-api-key': secret } });

    await settleBeforeMeasuring(database);

    const rounds: { free: Measurement; fenced: Measurement }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternating order: neither key always runs on a machine just warmed (or tired) by the other.
      const first = round % 2 === 1;
      const a = await run(first ? 'unlimited key' : 'rate-limited key', first ? unlimited : limited);
      const b = await run(first ? 'rate-limited key' : 'unlimited key', first ? limited : unlimited);
      const [freeRun, fencedRun] = first ? [a, b] : [b, a];
      for (const m of [freeRun, fencedRun]) {
        if (m.failures > 0) throw new Error(`${m.label}: ${m.failures} answers failed or were not 2xx (a 429 would mean the limit was not far above the load)`);
        print(describe(m));
      }
      print(`  round ${round}: rate-limited / unlimited ${percent(fencedRun.rps / freeRun.rps)}`);
      rounds.push({ free: freeRun, fenced: fencedRun });
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }

    const row = (label: string, pick: (r: (typeof rounds)[number]) => Measurement, ratio: string) => {
      const m = medianOf(rounds.map(pick));
      return [label, range(rounds.map((r) => pick(r).rps), (v) => v.toFixed(0)), m.p50.toFixed(1), m.p99.toFixed(1), m.nodeMs.toFixed(2), ratio];
    };
    print(`\nGET ${PATH}, medians over ${ROUNDS} rounds of ${DURATION} s [range], load average at the end ${loadAverages()}:\n`);
    print(
      markdownTable(
        ['GET /users?limit=50', 'req/s', 'p50 ms', 'p99 ms', 'Node CPU ms/req', 'ratio'],
        [
          row('unlimited key', (r) => r.free, '–'),
          row(`**rate-limited key** (${LIMIT.requests}/${LIMIT.per_seconds} s)`, (r) => r.fenced, `**${range(rounds.map((r) => r.fenced.rps / r.free.rps), percent)} of the unlimited**`),
        ],
      ),
    );
  } finally {
    if (service) await stopProcess(service.child);
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
