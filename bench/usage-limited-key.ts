// Usage-limited keys under load (docs/PARTNER-KEYS.md, "Usage limits"): BENCH_PROCESSES (3)
// service processes on one PostgreSQL, BENCH_CONNECTIONS (64) connections spread over them (one
// wrk per process, run at once), GET /users?limit=50.
//  1. Exactness: a key with BENCH_USES (10,000) uses, asked for BENCH_EXHAUST_SECONDS (10) by all
//     connections, far past its last use. Exactly BENCH_USES answers must be 200 (wrk counts the
//     rest as non-2xx: the 429s), and its row in the database must read 0. Any other count fails
//     the run.
//  2. Cost: a usage-limited key that never runs out (1,000,000,000 uses, spent in the database by
//     one statement per burst of requests or per lease: src/api-keys/uses.ts) side by side with an unlimited key (memory only), BENCH_ROUNDS
//     rounds of BENCH_DURATION seconds each, in alternating order so each ratio compares
//     measurements under the same load. Target: the limited key within 10 % of the unlimited one.
// Prints a markdown table at the end (docs/BENCHMARKS.md, "Usage-limited key").
//
// Run alone on a quiet machine (it starts its own PostgreSQL 15 unless DATABASE_URL is set):
//   make build && node --import tsx bench/usage-limited-key.ts
// A smoke run of the script itself (seconds, proves nothing about speed):
//   BENCH_USERS=200 BENCH_USES=3000 BENCH_EXHAUST_SECONDS=4 BENCH_ROUNDS=1 BENCH_DURATION=1 BENCH_WARM_UP=1 BENCH_CONNECTIONS=6 node --import tsx bench/usage-limited-key.ts
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, settleBeforeMeasuring, operatorKey } from './support/database.js';
import { loadAverages, machineLine, markdownTable, percent, print, range } from './support/measure.js';
import { wrk, type WrkResult } from './support/wrk.js';

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);
const USES = Number(process.env.BENCH_USES ?? 10_000);
const EXHAUST_SECONDS = Number(process.env.BENCH_EXHAUST_SECONDS ?? 10);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH = '/users?limit=50';
/** Never spent in a run: the limited key of the cost comparison is always admitted. */
const PLENTY = 1_000_000_000;

/** Each process's share of the connections (at least one each). */
const shares = Array.from({ length: PROCESSES }, (_, i) => Math.max(1, Math.floor(CONNECTIONS / PROCESSES) + (i < CONNECTIONS % PROCESSES ? 1 : 0)));

/** One wrk per process at once, with `secret`: their results. */
function loadAll(urls: string[], secret: string, seconds: number): Promise<WrkResult[]> {
  return Promise.all(urls.map((url, i) => wrk(`${url}${PATH}`, { connections: shares[i]!, seconds, headers: { 'x-api-key': secret } })));
}

const sum = (results: WrkResult[], pick: (r: WrkResult) => number) => results.reduce((total, r) => total + pick(r), 0);

async function main() {
  const database = await benchDatabase('bench_usage_limited', { migrate: false });
  const { db } = database;
  const services: Awaited<ReturnType<typeof startProcess>>[] = [];
  try {
    for (let i = 0; i < PROCESSES; i++) services.push(await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV }));
    const urls = services.map((s) => s.url);
    await seedUsers(db, { users: USERS, seed: 1 });
    await sql`vacuum analyze users`.execute(db);
    const unlimited = (await operatorKey(db, { name: 'bench unlimited', permissions: ['users.list'] })).secret;
    const limited = (await operatorKey(db, { name: 'bench limited', permissions: ['users.list'], remaining_uses: PLENTY })).secret;
    const counted = await operatorKey(db, { name: 'bench counted', permissions: ['users.list'], remaining_uses: USES });

    // Both keys answer the same page; only the limited one carries its uses in RateLimit.
    const answer = async (secret: string) => {
      const res = await fetch(`${urls[0]}${PATH}`, { headers: { 'x-api-key': secret } });
      return { status: res.status, uses: res.headers.get('ratelimit'), body: await res.text() };
    };
    const [free, fenced] = [await answer(unlimited), await answer(limited)];
    if (free.status !== 200 || fenced.status !== 200 || free.body !== fenced.body) throw new Error(`the two keys answer differently: ${free.status} ${fenced.status}`);
    if (free.uses !== null || !/^"api-key-uses";r=\d+$/.test(fenced.uses ?? '')) throw new Error(`unexpected RateLimit: ${free.uses} / ${fenced.uses}`);
    print(`same page for both keys (${free.body.length} bytes); the limited one says RateLimit: ${fenced.uses}`);
    print(machineLine(`${PROCESSES} processes, wrk ${shares.join('+')} connections; service: ${SERVICE_SCRIPT}, NODE_ENV=production, DB_POOL_MAX=10, ${USERS} users`, { load: true }));

    print(`warming up for ${WARM_UP} s per key`);
    for (const secret of [unlimited, limited]) await loadAll(urls, secret, WARM_UP);
    await settleBeforeMeasuring(database);

    // 1. Exactly its uses, at the last one too, over every process at once.
    const exhaust = await loadAll(urls, counted.secret, EXHAUST_SECONDS);
    const sent = sum(exhaust, (r) => r.requests);
    const admitted = sent - sum(exhaust, (r) => r.failures);
    const left = (await db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', counted.key.id).executeTakeFirstOrThrow()).remaining;
    const exact = admitted === USES && left === 0;
    print(`exactness: ${sent} requests in ${EXHAUST_SECONDS} s, ${admitted} admitted of ${USES} uses, ${left} left in the database: ${exact ? 'exact' : 'NOT EXACT (fails)'}`);
    if (sent <= USES) print(`  (the load did not reach past the last use: raise BENCH_EXHAUST_SECONDS)`);

    // 2. What counting a use costs: the limited key beside the unlimited one.
    const rounds: { free: number; fenced: number; freeP99: number; fencedP99: number }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const first = round % 2 === 1;
      const a = await loadAll(urls, first ? unlimited : limited, DURATION);
      const b = await loadAll(urls, first ? limited : unlimited, DURATION);
      const [freeRun, fencedRun] = first ? [a, b] : [b, a];
      for (const [label, run] of [['unlimited', freeRun], ['usage-limited', fencedRun]] as const) {
        if (sum(run, (r) => r.failures) > 0) throw new Error(`${label} key: ${sum(run, (r) => r.failures)} answers failed or were not 2xx`);
      }
      const r = {
        free: sum(freeRun, (x) => x.rps),
        fenced: sum(fencedRun, (x) => x.rps),
        freeP99: Math.max(...freeRun.map((x) => x.p99)),
        fencedP99: Math.max(...fencedRun.map((x) => x.p99)),
      };
      print(`  round ${round}: unlimited ${r.free.toFixed(0)} req/s, usage-limited ${r.fenced.toFixed(0)} req/s: ${percent(r.fenced / r.free)}`);
      rounds.push(r);
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)]!;
    const ratios = rounds.map((r) => r.fenced / r.free);
    print(`\nGET ${PATH}, ${PROCESSES} processes, ${CONNECTIONS} connections, medians over ${ROUNDS} rounds of ${DURATION} s [range], load average at the end ${loadAverages()}:\n`);
    print(
      markdownTable(
        ['GET /users?limit=50', 'req/s (3 processes)', 'p99 ms (worst process)', 'ratio'],
        [
          ['unlimited key (memory only)', range(rounds.map((r) => r.free), (v) => v.toFixed(0)), median(rounds.map((r) => r.freeP99)).toFixed(1), '–'],
          ['**usage-limited key** (uses spent in PostgreSQL, by burst or lease)', range(rounds.map((r) => r.fenced), (v) => v.toFixed(0)), median(rounds.map((r) => r.fencedP99)).toFixed(1), `**${range(ratios, percent)} of the unlimited**`],
          [`exactness: ${USES} uses, ${sent} requests`, `${admitted} admitted`, '–', exact ? 'exact' : '**not exact**'],
        ],
      ),
    );
    print(`\ntarget: usage-limited within 10 % of unlimited: median ${percent(median(ratios))} ${median(ratios) >= 0.9 ? 'met' : 'missed'}; exactly its uses admitted: ${exact ? 'yes' : 'NO'}`);
    if (!exact) process.exitCode = 1;
  } finally {
    await Promise.all(services.map((s) => stopProcess(s.child)));
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
