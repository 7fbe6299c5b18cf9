// Soak: mixed traffic against a real server process on real PostgreSQL for SOAK_DURATION_S seconds
// (default 600), reporting errors, latency percentiles per minute and the server's resident memory
// over time. Targets: zero errors; RSS growing less than 10% from the 2-minute mark (a fifth of
// the run, for other durations) to the end. Exits 1 when a target is missed.
//
//   make soak                               # 10 minutes
//   SOAK_DURATION_S=60 make soak            # a quick look
//   SOAK_CONNECTIONS=32 DATABASE_URL=postgres://... make soak
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import { startCluster, withDatabase, type Cluster } from '../test/support/postgres.js';
import { startServerProcess } from '../test/support/server-process.js';
import { HttpClient, type RawRequest } from '../test/support/http-client.js';

const DURATION_S = Number(process.env.SOAK_DURATION_S ?? 600);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 16);
const SAMPLE_EVERY_MS = 10_000;
const REPORT = process.env.SOAK_REPORT ?? 'test-results/soak.json';

/** One kind of request of the mix, with the statuses that count as a correct answer. */
interface Traffic {
  name: string;
  weight: number;
  request: () => RawRequest;
  expected: number[];
}

// The traffic that exists today. Sign-ins, refreshes, listings with keys and tokens, key creation
// and revocation join the mix when sign-in (issue 3) and API keys (issue 4) are in the build.
const MIX: Traffic[] = [
  { name: 'GET /readyz', weight: 2, request: () => ({ method: 'GET', path: '/readyz' }), expected: [200] },
  { name: 'GET /livez', weight: 1, request: () => ({ method: 'GET', path: '/livez' }), expected: [200] },
  { name: 'GET /users without credentials', weight: 3, request: () => ({ method: 'GET', path: '/users' }), expected: [401] },
  { name: 'GET /users with an unknown key', weight: 3, request: () => ({ method: 'GET', path: '/users', headers: { 'x-api-key': 'bok_unknown' } }), expected: [401] },
  {
    name: 'POST /sessions invalid body',
    weight: 3,
    request: () => ({ method: 'POST', path: '/sessions', headers: { 'content-type': 'application/json', 'x-api-inflection': 'camel' }, body: JSON.stringify({ session: { email: 'ada@example.com', password: 7 } }) }),
    expected: [400],
  },
  { name: 'GET /openapi.json', weight: 1, request: () => ({ method: 'GET', path: '/openapi.json' }), expected: [200] },
];

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function rssKiB(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) : 0;
}

async function main() {
  let cluster: Cluster | undefined;
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    cluster = await startCluster();
    adminUrl = cluster.adminUrl;
  }
  const name = `soak_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const server = await startServerProcess({ DATABASE_URL: withDatabase(adminUrl, name), LOG_LEVEL: 'warn', NODE_ENV: 'production' });
  const client = new HttpClient(server.url, CONNECTIONS);
  const pid = server.child.pid!;

  const weighted = MIX.flatMap((t) => Array.from({ length: t.weight }, () => t));
  const minutes: { latencies: number[]; requests: number; errors: number }[] = [];
  const errors: Record<string, number> = {};
  const memory: { atS: number; rssMiB: number }[] = [];
  const started = Date.now();
  const deadline = started + DURATION_S * 1000;
  const sample = () => memory.push({ atS: Math.round((Date.now() - started) / 1000), rssMiB: Math.round((rssKiB(pid) / 1024) * 10) / 10 });
  sample();
  const sampler = setInterval(sample, SAMPLE_EVERY_MS);

  const workers = Array.from({ length: CONNECTIONS }, async (_, w) => {
    for (let i = w; Date.now() < deadline; i++) {
      const traffic = weighted[(i * 7 + w) % weighted.length]!;
      const minute = Math.floor((Date.now() - started) / 60_000);
      const bucket = (minutes[minute] ??= { latencies: [], requests: 0, errors: 0 });
      const t0 = performance.now();
      let problem: string | undefined;
      try {
        const res = await client.send(traffic.request(), { timeoutMs: 10_000 });
        if (!traffic.expected.includes(res.status)) problem = `${traffic.name}: status ${res.status}`;
      } catch (err) {
        problem = `${traffic.name}: ${(err as Error).message}`;
      }
      bucket.latencies.push(performance.now() - t0);
      bucket.requests++;
      if (problem) {
        bucket.errors++;
        errors[problem] = (errors[problem] ?? 0) + 1;
      }
    }
  });
  await Promise.all(workers);
  clearInterval(sampler);
  sample();

  client.close();
  const exitCode = await server.stop();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
  cluster?.stop();

  const perMinute = minutes.map((m, minute) => {
    const sorted = [...m.latencies].sort((a, b) => a - b);
    const round = (n: number) => Math.round(n * 100) / 100;
    return { minute: minute + 1, requests: m.requests, errors: m.errors, p50Ms: round(percentile(sorted, 50)), p95Ms: round(percentile(sorted, 95)), p99Ms: round(percentile(sorted, 99)), maxMs: round(sorted.at(-1) ?? 0) };
  });
  // Memory growth from the end of warm-up (minute 2 of 10: a fifth of the run) to the end.
  const warmS = (DURATION_S * 2) / 10;
  const afterWarm = memory.find((m) => m.atS >= warmS) ?? memory[0]!;
  const last = memory.at(-1)!;
  const rssGrowthPercent = Math.round(((last.rssMiB - afterWarm.rssMiB) / afterWarm.rssMiB) * 1000) / 10;
  const totalErrors = Object.values(errors).reduce((a, b) => a + b, 0);
  const report = {
    command: `SOAK_DURATION_S=${DURATION_S} SOAK_CONNECTIONS=${CONNECTIONS} make soak`,
    durationS: DURATION_S,
    connections: CONNECTIONS,
    requests: perMinute.reduce((a, m) => a + m.requests, 0),
    errors: totalErrors,
    errorKinds: errors,
    serverExitCode: exitCode,
    rss: { fromS: afterWarm.atS, fromMiB: afterWarm.rssMiB, toS: last.atS, toMiB: last.rssMiB, growthPercent: rssGrowthPercent },
    perMinute,
    memory,
    targets: { zeroErrors: totalErrors === 0, rssGrowthUnder10Percent: rssGrowthPercent < 10 },
  };
  mkdirSync(dirname(REPORT), { recursive: true });
  writeFileSync(REPORT, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ ...report, memory: undefined }, null, 2)}\nreport written to ${REPORT}\n`);
  process.exit(report.targets.zeroErrors && report.targets.rssGrowthUnder10Percent && exitCode === 0 ? 0 : 1);
}

main().catch((err) => {
  console.error('soak failed:', err);
  process.exit(1);
});
