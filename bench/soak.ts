// Soak: mixed traffic against a real server process on real PostgreSQL for SOAK_DURATION_S seconds
// (default 600): sign-ins, refreshes, listings with bearer tokens and API keys, API keys created,
// used, revoked and refused, probes and refused requests. It reports errors, latency percentiles
// per minute and the server's resident memory over time. Targets: zero errors; RSS growing less than 10% from the 2-minute mark (a fifth of
// the run, for other durations) to the end. Exits 1 when a target is missed.
//
//   make soak                               # 10 minutes
//   SOAK_DURATION_S=60 make soak            # a quick look
//   SOAK_CONNECTIONS=32 DATABASE_URL=postgres://... make soak
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { startCluster, withDatabase, type Cluster } from '../test/support/postgres.js';
import { BENCH_SEALING_KEYS } from './support/process.js';
import { operatorKey } from './support/database.js';
import { startServerProcess } from '../test/support/server-process.js';
import { HttpClient, type RawRequest, type RawResponse } from '../test/support/http-client.js';
import type { Database } from '../src/db/schema.js';
import { createUserWithPassword } from '../src/users/credentials.js';

const DURATION_S = Number(process.env.SOAK_DURATION_S ?? 600);
const CONNECTIONS = Number(process.env.SOAK_CONNECTIONS ?? 16);
const SAMPLE_EVERY_MS = 10_000;
const REPORT = process.env.SOAK_REPORT ?? 'test-results/soak.json';

const USERS = 20;
const json = { 'content-type': 'application/json' };

/** What one connection holds between requests: a signed-in session, and a key it created and has not revoked yet. */
interface Worker {
  email: string;
  password: string;
  tokens: { access_token: string; refresh_token: string };
  key?: { id: string; secret: string; step: 'use' | 'revoke' | 'refused' };
}

/**
 * One kind of request of the mix: it sends one request (using and updating the worker's state)
 * and gives back the answer with the statuses that count as correct.
 */
interface Traffic {
  name: string;
  weight: number;
  send: (client: HttpClient, worker: Worker) => Promise<{ res: RawResponse; expected: number[] }>;
}

const signInRequest = (w: Worker): RawRequest => ({ method: 'POST', path: '/sessions', headers: json, body: JSON.stringify({ session: { email: w.email, password: w.password } }) });
const bearer = (w: Worker) => ({ authorization: `Bearer ${w.tokens.access_token}` });
const once = async (client: HttpClient, req: RawRequest, expected: number[]) => ({ res: await client.send(req, { timeoutMs: 10_000 }), expected });
let sharedKey = '';

const MIX: Traffic[] = [
  { name: 'GET /readyz', weight: 1, send: (c) => once(c, { method: 'GET', path: '/readyz' }, [200]) },
  { name: 'GET /users without credentials', weight: 1, send: (c) => once(c, { method: 'GET', path: '/users' }, [401]) },
  { name: 'GET /users with an unknown key', weight: 1, send: (c) => once(c, { method: 'GET', path: '/users', headers: { 'x-api-key': 'bok_unknown' } }, [401]) },
  { name: 'POST /sessions invalid body', weight: 1, send: (c) => once(c, { method: 'POST', path: '/sessions', headers: { ...json, 'x-api-inflection': 'camel' }, body: JSON.stringify({ session: { email: 'ada@example.com', password: 7 } }) }, [400]) },
  {
    // A new session each time (argon2id: the costly request of the mix), which this connection then uses.
    name: 'POST /sessions (sign-in)',
    weight: 1,
    async send(c, w) {
      const res = await c.send(signInRequest(w), { timeoutMs: 10_000 });
      if (res.status === 201) w.tokens = res.body as Worker['tokens'];
      return { res, expected: [201] };
    },
  },
  {
    name: 'POST /tokens (refresh)',
    weight: 3,
    async send(c, w) {
      const res = await c.send({ method: 'POST', path: '/tokens', headers: { ...json, ...bearer(w) }, body: JSON.stringify({ refresh_token: w.tokens.refresh_token }) }, { timeoutMs: 10_000 });
      if (res.status === 201) w.tokens = res.body as Worker['tokens'];
      return { res, expected: [201] };
    },
  },
  { name: 'GET /users with a bearer token', weight: 5, send: (c, w) => once(c, { method: 'GET', path: '/users?limit=20', headers: bearer(w) }, [200]) },
  { name: 'GET /utilisateurs with an API key, camelCase', weight: 5, send: (c) => once(c, { method: 'GET', path: '/utilisateurs?limit=20', headers: { 'x-api-key': sharedKey, 'x-api-inflection': 'camel' } }, [200]) },
  { name: 'GET /me', weight: 2, send: (c, w) => once(c, { method: 'GET', path: '/me', headers: bearer(w) }, [200]) },
  {
    // Create a key, use it, revoke it, see it refused: one step (one request) each time, in turn.
    name: 'API key: create, use, revoke, refused',
    weight: 4,
    async send(c, w) {
      const key = w.key;
      if (!key) {
        const res = await c.send({ method: 'POST', path: '/api-keys', headers: { ...json, ...bearer(w) }, body: JSON.stringify({ name: `soak ${randomUUID()}`, permissions: ['users.list'] }) }, { timeoutMs: 10_000 });
        if (res.status === 201) {
          const body = res.body as { api_key: { id: string }; secret: string };
          w.key = { id: body.api_key.id, secret: body.secret, step: 'use' };
        }
        return { res, expected: [201] };
      }
      if (key.step === 'use') {
        key.step = 'revoke';
        return once(c, { method: 'GET', path: '/users?limit=5', headers: { 'x-api-key': key.secret } }, [200]);
      }
      if (key.step === 'revoke') {
        key.step = 'refused';
        return once(c, { method: 'DELETE', path: `/api-keys/${key.id}`, headers: bearer(w) }, [204]);
      }
      w.key = undefined;
      return once(c, { method: 'GET', path: '/users', headers: { 'x-api-key': key.secret } }, [401]);
    },
  },
];

/** Users with passwords and a role to list users and manage keys, and one shared API key: made with the service's own code. */
async function seed(databaseUrl: string): Promise<{ users: { email: string; password: string }[]; key: string }> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 4 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  const role = await db.insertInto('roles').values({ name: 'soak', name_key: 'soak' }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['users.list', 'users.read', 'api_keys.manage'].map((permission) => ({ role_id: role.id, permission }))).execute();
  const users = [];
  for (let i = 0; i < USERS; i++) {
    const user = { email: `soak${i}@example.com`, password: `soak password number ${i} ${randomUUID()}` };
    const { id } = await createUserWithPassword(db, { email: user.email, firstName: 'Soak', lastName: `User ${i}`, password: user.password, roles: [] });
    await db.insertInto('user_roles').values({ user_id: id, role_id: role.id }).execute();
    users.push(user);
  }
  const { secret } = await operatorKey(db, { name: 'soak listing key', permissions: ['users.list'] });
  await db.destroy();
  return { users, key: secret };
}

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
  const databaseUrl = withDatabase(adminUrl, name);
  const server = await startServerProcess({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', NODE_ENV: 'production', SEALING_KEYS: BENCH_SEALING_KEYS, MAIL_OUTBOX_ONLY: 'true' });
  const client = new HttpClient(server.url, CONNECTIONS);
  const pid = server.child.pid!;
  const seeded = await seed(databaseUrl);
  sharedKey = seeded.key;
  const workerStates: Worker[] = [];
  for (let w = 0; w < CONNECTIONS; w++) {
    const user = seeded.users[w % seeded.users.length]!;
    const state: Worker = { ...user, tokens: { access_token: '', refresh_token: '' } };
    const res = await client.send(signInRequest(state));
    if (res.status !== 201) throw new Error(`soak sign-in answered ${res.status}: ${res.text}`);
    state.tokens = res.body as Worker['tokens'];
    workerStates.push(state);
  }

  const weighted = MIX.flatMap((t) => Array.from({ length: t.weight }, () => t));
  const minutes: { latencies: number[]; requests: number; errors: number }[] = [];
  const errors: Record<string, number> = {};
  const requestsByKind: Record<string, number> = {};
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
        const { res, expected } = await traffic.send(client, workerStates[w]!);
        if (!expected.includes(res.status)) problem = `${traffic.name}: status ${res.status} ${res.text.slice(0, 200)}`;
      } catch (err) {
        problem = `${traffic.name}: ${(err as Error).message}`;
      }
      bucket.latencies.push(performance.now() - t0);
      bucket.requests++;
      requestsByKind[traffic.name] = (requestsByKind[traffic.name] ?? 0) + 1;
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
    requestsByKind,
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
