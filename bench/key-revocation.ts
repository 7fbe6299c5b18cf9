// How soon every process refuses a revoked key it holds in memory (src/api-keys/key-cache.ts,
// docs/PARTNER-KEYS.md "Keys in memory"): BENCH_PROCESSES (3) service processes on one
// PostgreSQL, BENCH_REVOCATIONS (1,000) keys, each:
//  1. used at every process until each has answered it twice (loaded, then from memory);
//  2. every process asked with it without pause, one request at a time, from before the revocation;
//  3. revoked (the service's own revoke, one transaction); its commit acknowledged at `t`;
//  4. per process, the revocation is "seen" at the arrival of the first 401 whose request was sent
//     after `t` (an upper bound: it includes that request's round trip); every later answer must be
//     401 too, and any 200 to a request sent after that first refusal counts as admitted-after.
// Prints p50, p99 and the largest of the 3 × 1,000 latencies, the requests admitted between `t`
// and each process's first refusal (expected: the notification's flight), and the admitted-after
// count (must be 0). BENCH_VARIANT_ENV="API_KEY_CACHE_SIZE=0" runs the same without the cache (every
// request asks the database) for comparison.
//
// Run alone on a quiet machine (it starts its own PostgreSQL 15 unless DATABASE_URL is set):
//   make build && node --import tsx bench/key-revocation.ts
import { sql } from 'kysely';
import { ApiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';
import { SERVICE_ENV, SERVICE_SCRIPT, VARIANT_ENV, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, operatorKey } from './support/database.js';
import { machineLine, markdownTable, print } from './support/measure.js';

const PROCESSES = Number(process.env.BENCH_PROCESSES ?? 3);
const REVOCATIONS = Number(process.env.BENCH_REVOCATIONS ?? 1000);
const PATH = '/users?limit=1';
/** How long one process may take to refuse before the run fails (ms): far above any target. */
const GIVE_UP_MS = 10_000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function ask(url: string, secret: string): Promise<number> {
  const res = await fetch(`${url}${PATH}`, { headers: { 'x-api-key': secret } });
  await res.arrayBuffer();
  return res.status;
}

interface Seen {
  /** ms from the commit's acknowledgement to the arrival of the first refusal sent after it. */
  latencyMs: number;
  /** 200s to requests sent after the commit was acknowledged, before that refusal. */
  admittedInFlight: number;
  /** 200s to requests sent after that refusal (must be none). */
  admittedAfter: number;
}

/** Asks without pause from now on; `revokedAt()` is undefined until the commit is acknowledged. */
async function watch(url: string, secret: string, revokedAt: () => number | undefined): Promise<Seen> {
  let admittedInFlight = 0;
  for (;;) {
    const sent = performance.now();
    const status = await ask(url, secret);
    const arrived = performance.now();
    const t = revokedAt();
    if (t === undefined || sent < t) {
      if (status !== 200 && status !== 401) throw new Error(`unexpected ${status}`);
      continue; // sent before the commit: either answer is right
    }
    if (status === 200) {
      admittedInFlight++;
      if (arrived - t > GIVE_UP_MS) throw new Error(`${url} still admits a key revoked ${GIVE_UP_MS} ms ago`);
      continue;
    }
    if (status !== 401) throw new Error(`unexpected ${status}`);
    let admittedAfter = 0;
    for (let i = 0; i < 3; i++) if ((await ask(url, secret)) === 200) admittedAfter++;
    return { latencyMs: arrived - t, admittedInFlight, admittedAfter };
  }
}

async function main() {
  const database = await benchDatabase('bench_key_revocation', { migrate: false });
  const { db } = database;
  const services: Awaited<ReturnType<typeof startProcess>>[] = [];
  try {
    for (let i = 0; i < PROCESSES; i++) services.push(await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, ...VARIANT_ENV }));
    // Each process listens (unless the variant turned the cache off) and has proved it hears.
    const cacheOn = VARIANT_ENV.API_KEY_CACHE_SIZE !== '0';
    for (let waited = 0; cacheOn; waited += 100) {
      const listening = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = 'backoffice-api-keys' and query like 'LISTEN%'`.execute(db);
      if (listening.rows[0]!.n >= PROCESSES) break;
      if (waited > 30_000) throw new Error('the processes do not listen');
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 3000)); // their first heartbeat has come back
    const keys = new ApiKeyService({ db, clock: systemClock });
    print(machineLine(`${PROCESSES} processes, ${REVOCATIONS} revocations; service: ${SERVICE_SCRIPT}, NODE_ENV=production${cacheOn ? '' : ', API_KEY_CACHE_SIZE=0'}`, { load: true }));

    const latencies: number[] = [];
    let admittedInFlight = 0;
    let admittedAfter = 0;
    for (let n = 0; n < REVOCATIONS; n++) {
      const { key, secret } = await operatorKey(db, { name: `bench revoked ${n}`, permissions: ['users.list'] });
      for (const service of services) for (let i = 0; i < 2; i++) if ((await ask(service.url, secret)) !== 200) throw new Error('a fresh key was refused');
      const commit: { at?: number } = {};
      const watching = services.map((service) => watch(service.url, secret, () => commit.at));
      await new Promise((r) => setTimeout(r, 2)); // every watcher has a request in flight
      await keys.revoke(OPERATOR, key.id);
      commit.at = performance.now();
      for (const seen of await Promise.all(watching)) {
        latencies.push(seen.latencyMs);
        admittedInFlight += seen.admittedInFlight;
        admittedAfter += seen.admittedAfter;
      }
      if ((n + 1) % 100 === 0) print(`  ${n + 1} revocations`);
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    const ms = (v: number) => `${v.toFixed(1)} ms`;
    print();
    print(
      markdownTable(
        ['revocations × processes', 'p50', 'p99', 'max', 'admitted in flight (sent after the commit, before the refusal)', 'admitted after a refusal'],
        [[`${REVOCATIONS} × ${PROCESSES}`, ms(percentile(sorted, 50)), ms(percentile(sorted, 99)), ms(sorted.at(-1)!), String(admittedInFlight), String(admittedAfter)]],
      ),
    );
    print();
    print(`p99 ${percentile(sorted, 99) < 100 ? 'under' : 'NOT under'} 100 ms; admitted after a refusal: ${admittedAfter === 0 ? 'none' : `${admittedAfter} (FAILS)`}`);
    if (admittedAfter > 0) process.exitCode = 1;
  } finally {
    await Promise.all(services.map((s) => stopProcess(s.child)));
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
