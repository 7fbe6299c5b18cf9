// Benchmark of GET /users?limit=50 against its floor (see docs/BENCHMARKS.md for how to run it and
// the results). In one run:
//  1. a throwaway PostgreSQL 15 (or DATABASE_URL), migrated, seeded with 100,000 users;
//  2. four servers, each in its own process: the service (dist/src/main.js as `npm start` starts
//     it, NODE_ENV=production, response validation off, access log on), the floor (bench/floor.ts:
//     Express 5 + pg running the service's own statements, prepared), the same floor with no
//     authentication at all (FLOOR_AUTHENTICATION=none: no credential read, only the page's
//     statement; the keyed service's target is at least 100 % of it: knowing the caller costs
//     nothing), and a bare Express app answering the same page from memory (context: what no
//     database costs);
//  3. the answers are checked byte for byte (service and floor, API key and bearer; the floor
//     without authentication too) before anything is measured; then rounds of (bare, the floor
//     without authentication, floor and service with an API key, floor and service with a bearer
//     token), in alternating 1-s slices, so each ratio compares measurements under the same load (the
//     order a row of a Williams design, reversed from round to round: measureInTurn);
//  4. then the table grows past 1,000,000 users and the first page is compared with the page that
//     starts after the millionth user.
// The load comes from wrk (a C program in its own process). Prints a markdown table at the end.
// BENCH_VARIANT_ENV (e.g. "METRICS_PORT=0") and/or BENCH_VARIANT_SCRIPT (another build's main.js)
// add a second service process, the variant, measured in every round beside the service with
// both credentials: what a setting or a change costs, side by side under the same load.
import { writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { seedUsers } from '../src/cli/seed.js';
import { encodeCursor } from '../src/users/cursor.js';
import { SERVICE_ENV, SERVICE_SCRIPT, VARIANT_ENV, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { FLOOR_ROUND_LABELS, describe, floorRatiosLine, floorRatiosOf, machineLine, measure, measureInTurn, slicedMeasurement, medianOf, percent, print, printFloorTable, printFloorTargets, quietBefore, range, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';
import { expectSameAnswers } from './support/compare.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
// Each measurement: 5 s as five alternating 1-s slices (measureInTurn), checked now, before any seeding.
const { seconds: DURATION, slices: SLICES } = slicedMeasurement();
const USERS = Number(process.env.BENCH_USERS ?? 100_000);
const DEEP = Number(process.env.BENCH_DEEP ?? 1_000_000);
// Load on each server and path before the rounds: V8 optimises the request path for ~10 s after start.
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);
const PATH = '/users?limit=50';
const VARIANT_SCRIPT = process.env.BENCH_VARIANT_SCRIPT;
const WITH_VARIANT = VARIANT_SCRIPT !== undefined || Object.keys(VARIANT_ENV).length > 0;

// The service migrates the database (so BENCH_SERVICE_SCRIPT may name another build to compare).
runBenchmark(() => benchDatabase('bench_users', { migrate: false }), async (database, children) => {
  const { db } = database;
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
  children.push(service.child);
  let t = Date.now();
  await seedUsers(db, { users: USERS, seed: 1 });
  await sql`vacuum analyze users`.execute(db);
  print(`seeded ${USERS} users in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  const { secret, bearer } = await benchCredentials(db, 'users.list');

  const floor = await startProcess('bench/floor.ts', { DATABASE_URL: database.url });
  children.push(floor.child);
  const open = await startProcess('bench/floor.ts', { DATABASE_URL: database.url, FLOOR_AUTHENTICATION: 'none' });
  children.push(open.child);
  const page = await fetch(`${service.url}${PATH}`, { headers: { 'x-api-key': secret } });
  if (page.status !== 200) throw new Error(`GET /users answered ${page.status}: ${await page.text()}`);
  const dir = mkdtempSync(join(tmpdir(), 'bench-'));
  writeFileSync(join(dir, 'users.json'), await page.text());
  const bare = await startProcess('bench/bare-express.ts', { USERS_JSON_FILE: join(dir, 'users.json') });
  children.push(bare.child);
  const variant = WITH_VARIANT ? await startProcess(VARIANT_SCRIPT ?? SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV, ...VARIANT_ENV }) : undefined;
  if (variant) children.push(variant.child);
  const targets: Record<'service' | 'floor' | 'open' | 'bare', Target & { url: string }> & { variant?: Target & { url: string } } = {
    service: { url: service.url, pid: service.child.pid!, postmaster: database.postmaster },
    floor: { url: floor.url, pid: floor.child.pid!, postmaster: database.postmaster },
    open: { url: open.url, pid: open.child.pid!, postmaster: database.postmaster },
    bare: { url: bare.url, pid: bare.child.pid!, postmaster: database.postmaster },
    ...(variant ? { variant: { url: variant.url, pid: variant.child.pid!, postmaster: database.postmaster } } : {}),
  };
  if (variant) print(`variant: ${VARIANT_SCRIPT ?? SERVICE_SCRIPT} with ${JSON.stringify(VARIANT_ENV)}`);

  // The same answer, byte for byte, or the comparison means nothing (the variant's too).
  const credentials = [['API key', { 'x-api-key': secret }], ['bearer', await bearer()]] as const;
  await expectSameAnswers(targets.service, targets.floor, PATH, credentials);
  if (targets.variant) await expectSameAnswers(targets.service, targets.variant, PATH, credentials, ['service', 'variant']);
  // The floor without authentication answers the keyed service's page to a request with no credential.
  const withoutCredential = await (await fetch(`${targets.open.url}${PATH}`)).text();
  const withKey = await (await fetch(`${targets.service.url}${PATH}`, { headers: { 'x-api-key': secret } })).text();
  if (withoutCredential !== withKey) throw new Error(`the floor without authentication answers differently:\n${withoutCredential.slice(0, 300)}\n${withKey.slice(0, 300)}`);
  print(`same page from the floor without authentication (${withoutCredential.length} bytes)`);

  print(machineLine(`load generator wrk -t2 -c${CONNECTIONS}; service: NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null, DB_POOL_MAX=10; floor: pool of 10`));
  const run = (label: string, target: Target & { url: string }, headers: Record<string, string>) => (seconds: number) =>
    measure(label, `${target.url}${PATH}`, target, { connections: CONNECTIONS, seconds, headers });
  print(`warming up each server and path for ${WARM_UP} s`);
  for (const target of [targets.bare, targets.open, targets.floor, targets.service, ...(targets.variant ? [targets.variant] : [])]) {
    const credentials: Record<string, string>[] = target === targets.bare || target === targets.open ? [{}] : [{ 'x-api-key': secret }, await bearer()];
    for (const headers of credentials) {
      await wrk(`${target.url}${PATH}`, { connections: CONNECTIONS, seconds: WARM_UP, headers });
    }
  }

  await settleBeforeMeasuring(database);
  await quietBefore();

  print(`\nGET ${PATH}, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per measurement, in ${SLICES} alternating slices, ${USERS} users`);
  type Round = Record<'bare' | 'floorOpen' | 'floorKey' | 'serviceKey' | 'floorBearer' | 'serviceBearer', Measurement> & { variantKey?: Measurement; variantBearer?: Measurement };
  const rounds: Round[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const token = await bearer(); // a fresh session: access tokens live 600 s
    const variant = targets.variant;
    const r: Round = await measureInTurn(round, {
      bare: run('bare Express, from memory', targets.bare, {}),
      floorOpen: run('floor, no authentication', targets.open, {}),
      floorKey: run(FLOOR_ROUND_LABELS.floorKey, targets.floor, { 'x-api-key': secret }),
      serviceKey: run(FLOOR_ROUND_LABELS.serviceKey, targets.service, { 'x-api-key': secret }),
      ...(variant ? { variantKey: run('variant, API key', variant, { 'x-api-key': secret }) } : {}),
      floorBearer: run(FLOOR_ROUND_LABELS.floorBearer, targets.floor, token),
      serviceBearer: run(FLOOR_ROUND_LABELS.serviceBearer, targets.service, token),
      ...(variant ? { variantBearer: run('variant, bearer', variant, token) } : {}),
    }, { seconds: DURATION, slices: SLICES });
    for (const m of Object.values(r)) print(describe(m));
    print(
      `  ${floorRatiosLine(r)}; ` +
        `floor/bare: API key ${percent(r.floorKey.rps / r.bare.rps)}, bearer ${percent(r.floorBearer.rps / r.bare.rps)}; ` +
        `service with a key / floor without authentication ${percent(r.serviceKey.rps / r.floorOpen.rps)}`,
    );
    rounds.push(r);
  }

  const ratios = {
    ...floorRatiosOf(rounds),
    floorKey: rounds.map((r) => r.floorKey.rps / r.bare.rps),
    floorBearer: rounds.map((r) => r.floorBearer.rps / r.bare.rps),
    keyOverOpen: rounds.map((r) => r.serviceKey.rps / r.floorOpen.rps),
  };
  const ms = (v: number) => v.toFixed(2);
  const variantRow = (label: string, variantKey: 'variantKey' | 'variantBearer', serviceKey: 'serviceKey' | 'serviceBearer') =>
    targets.variant ? [{ label, key: variantKey, ratio: `${range(rounds.map((r) => r[variantKey]!.rps / r[serviceKey].rps), percent)} of the service` }] : [];
  printFloorTable('GET /users?limit=50', rounds, ratios, {
    first: [
      { label: 'bare Express, from memory', key: 'bare', ratio: '–', database: false },
      { label: 'floor, no authentication', key: 'floorOpen', ratio: `service with a key: **${range(ratios.keyOverOpen, percent)}** of it` },
    ],
    floorRatio: { key: `${range(ratios.floorKey, percent)} of bare`, bearer: `${range(ratios.floorBearer, percent)} of bare` },
    afterKey: variantRow('variant, API key', 'variantKey', 'serviceKey'),
    afterBearer: variantRow('variant, bearer', 'variantBearer', 'serviceBearer'),
  });
  const key = medianOf(rounds.map((r) => r.serviceKey));
  const viaBearer = medianOf(rounds.map((r) => r.serviceBearer));
  const verdict = printFloorTargets(rounds, ratios);
  const keyOverOpen = [...ratios.keyOverOpen].sort((a, b) => a - b)[Math.floor(ratios.keyOverOpen.length / 2)]!;
  print(`  service with a key >= 100 % of the floor without authentication: median ${percent(keyOverOpen)} ${verdict(keyOverOpen >= 1)}`);
  print(`  Node CPU <= 0.8 ms/req:        API key ${ms(key.nodeMs)} ${verdict(key.nodeMs <= 0.8)}, bearer ${ms(viaBearer.nodeMs)} ${verdict(viaBearer.nodeMs <= 0.8)}`);
  print(`  PostgreSQL CPU <= 0.75 ms/req: API key ${ms(key.postgresMs)} ${verdict(key.postgresMs <= 0.75)}, bearer ${ms(viaBearer.postgresMs)} ${verdict(viaBearer.postgresMs <= 0.75)}`);

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
  print(`GET ${PATH}: first page vs the page after user ${DEEP}, service, API key, ${CONNECTIONS} connections`);
  const first = await measure('first page', `${service.url}${PATH}`, targets.service, { connections: CONNECTIONS, seconds: DURATION, headers: { 'x-api-key': secret } });
  const far = await measure(`page after ${DEEP} users`, `${service.url}${PATH}&cursor=${cursor}`, targets.service, {
    connections: CONNECTIONS,
    seconds: DURATION,
    headers: { 'x-api-key': secret },
  });
  print(describe(first));
  print(describe(far));
  print(`  cost ratio (deep / first, mean latency): ${(far.mean / first.mean).toFixed(2)}x (target <= 1.3x) ${verdict(far.mean / first.mean <= 1.3)}; throughput ratio ${(first.rps / far.rps).toFixed(2)}x`);
});
