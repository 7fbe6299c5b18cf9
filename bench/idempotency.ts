// What an Idempotency-Key costs a create: POST /tasks with a fresh key on every request, side by
// side with POST /tasks without one (its floor: the same create, unguarded), in one run.
//  1. Statements: the create's transaction run through the services with a query counter, with
//     and without a key (docs/SAFE-WRITES.md promises one more statement, and no lookup before).
//  2. HTTP: the service in its own process; BENCH_CONNECTIONS clients each send POST /tasks in a
//     loop for BENCH_DURATION seconds, alternately without and with a new key per request, for
//     BENCH_ROUNDS rounds, seconds apart, so each ratio compares measurements under the same load.
// Prints a markdown table at the end (docs/BENCHMARKS.md, "Idempotency-Key").
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/db/schema.js';
import { buildServices } from '../src/composition.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { systemClock } from '../src/clock.js';
import { COMMAND_LINE } from '../src/audit/context.js';
import type { Principal } from '../src/auth/principal.js';
import { BENCH_SEALING_KEYS, SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, createAdmin, operatorKey } from './support/database.js';
import { loadAverages, machineLine, markdownTable, median, percent, print, range } from './support/measure.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

/** Statements of one create through the services, with or without a key. */
async function statementsOfOneCreate(url: string, principal: Principal, withKey: boolean): Promise<string[]> {
  const seen: string[] = [];
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: (e) => void (e.level === 'query' && seen.push(e.query.sql.replace(/\s+/g, ' ').slice(0, 60))) });
  const { tasks, idempotency } = buildServices({ db, clock: systemClock, logger: createLogger('silent'), config: loadConfig({ NODE_ENV: 'production', SEALING_KEYS: BENCH_SEALING_KEYS, MAIL_OUTBOX_ONLY: 'true' }) });
  const key = withKey ? { caller: `user:${principal.kind === 'user' ? principal.userId : ''}`, operation: 'createTask', key: randomUUID(), requestDigest: Buffer.alloc(32) } : undefined;
  await idempotency.once(key, (trx) => tasks.create(trx, principal, { title: 'counted' }, COMMAND_LINE), ({ task }) => ({ status: 201, body: task }));
  await db.destroy();
  return seen;
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
}

/** CONNECTIONS loops of POST /tasks for DURATION seconds; each request with a new key when `withKey`. */
async function load(url: string, secret: string, withKey: boolean): Promise<Result> {
  const latencies: number[] = [];
  const until = Date.now() + DURATION * 1000;
  const loop = async () => {
    while (Date.now() < until) {
      const started = performance.now();
      const res = await fetch(`${url}/tasks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': secret, ...(withKey ? { 'idempotency-key': randomUUID() } : {}) },
        body: JSON.stringify({ title: 'Call the customer back', priority: 'high' }),
      });
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`POST /tasks answered ${res.status}`);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, loop));
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / DURATION, p50: latencies[Math.floor(latencies.length * 0.5)]!, p99: latencies[Math.floor(latencies.length * 0.99)]! };
}

async function main() {
  const database = await benchDatabase('bench_idempotency');
  const { db } = database;
  let service: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const admin = await createAdmin(db);
    const principal: Principal = { kind: 'user', userId: admin.id, sessionId: randomUUID(), permissions: new Set(['tasks.create']) };
    const without = await statementsOfOneCreate(database.url, principal, false);
    const withKey = await statementsOfOneCreate(database.url, principal, true);
    print(`statements of one create (BEGIN to COMMIT, and the read of the created task): ${without.length} without a key, ${withKey.length} with one`);
    for (const s of withKey) print(`    ${without.includes(s) ? ' ' : '+'} ${s}`);

    const { secret } = await operatorKey(db, { name: 'bench', permissions: ['tasks.create'] });
    service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
    print(`\n${machineLine(`${CONNECTIONS} clients in this process; service: ${SERVICE_SCRIPT}, NODE_ENV=production, DB_POOL_MAX=10`, { load: true })}`);
    await load(service.url, secret, false); // warm-up
    await load(service.url, secret, true);
    const rounds: { plain: Result; keyed: Result }[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const plain = await load(service.url, secret, false);
      const keyed = await load(service.url, secret, true);
      print(`round ${round}: without ${plain.rps.toFixed(0)} req/s p50 ${plain.p50.toFixed(1)} ms; with a key ${keyed.rps.toFixed(0)} req/s p50 ${keyed.p50.toFixed(1)} ms; ${percent(keyed.rps / plain.rps)}`);
      rounds.push({ plain, keyed });
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
    const row = (label: string, pick: (r: (typeof rounds)[number]) => Result, ratio: string, statements: number) => [
      label,
      String(statements),
      range(rounds.map((r) => pick(r).rps), (v) => v.toFixed(0)),
      median(rounds.map((r) => pick(r).p50)).toFixed(1),
      median(rounds.map((r) => pick(r).p99)).toFixed(1),
      ratio,
    ];
    print(`\nmedians over ${ROUNDS} rounds [range], load average at the end ${loadAverages()}:\n`);
    print(
      markdownTable(
        ['POST /tasks', 'statements (BEGIN to COMMIT, and the read-back)', 'req/s', 'p50 ms', 'p99 ms', 'ratio'],
        [
          row('without Idempotency-Key (floor)', (r) => r.plain, '–', without.length),
          row('**with a new Idempotency-Key**', (r) => r.keyed, `**${range(rounds.map((r) => r.keyed.rps / r.plain.rps), percent)} of the floor**`, withKey.length),
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
