// Benchmark of POST /tokens (refresh) against its floor (see docs/BENCHMARKS.md). The service and
// the floor (bench/floor.ts: Express 5 + pg running the service's own refresh statement, prepared)
// each in its own process; their answers are checked alike before anything is measured; then
// rounds of (floor, service), seconds apart. Every request rotates a session: each wrk connection
// starts with a session of its own (opened directly in the database) and sends, each time, the
// token set the previous answer gave (bench/refresh.lua). Prints a markdown table at the end.
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchDatabase, createAdmin, openSessions, settleBeforeMeasuring } from './support/database.js';
import { describe, machineLine, markdownTable, measure, measureInTurn, median, medianOf, percent, print, quietBefore, quietness, range, verdictFor, type Measurement, type Target } from './support/measure.js';
import { refreshScripts } from './support/refresh.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? 10);

interface Answer {
  status: number;
  headers: string;
  body: Record<string, unknown>;
}

async function refreshOnce(url: string, set: { access_token: string; refresh_token: string }): Promise<Answer> {
  const res = await fetch(`${url}/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${set.access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: set.refresh_token }),
  });
  return { status: res.status, headers: `${res.headers.get('content-type')} ${res.headers.get('cache-control')}`, body: (await res.json()) as Record<string, unknown> };
}

runBenchmark(() => benchDatabase('bench_refresh'), async (database, children) => {
  const { db } = database;
  const admin = await createAdmin(db);
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
  children.push(service.child);
  const floor = await startProcess('bench/floor.ts', { DATABASE_URL: database.url });
  children.push(floor.child);
  const targets: Record<'service' | 'floor', Target & { url: string }> = {
    service: { url: service.url, pid: service.child.pid!, postmaster: database.postmaster },
    floor: { url: floor.url, pid: floor.child.pid!, postmaster: database.postmaster },
  };

  // Alike answers: the same status, headers and fields in the same order; tokens of the same
  // shape (they are new secrets, so never the same bytes), and the new access token works.
  const shape = (a: Answer) => JSON.stringify({ ...a, body: Object.fromEntries(Object.entries(a.body).map(([k, v]) => [k, typeof v === 'string' ? v.replace(/_[0-9A-Za-z]+_[0-9A-Za-z]+$/, '_…') : v])) });
  const answers: Answer[] = [];
  for (const target of [targets.service, targets.floor]) {
    const [set] = await openSessions(db, admin, 1);
    const answer = await refreshOnce(target.url, set!);
    const me = await fetch(`${service.url}/me`, { headers: { authorization: `Bearer ${String(answer.body.access_token)}` } });
    if (answer.status !== 201 || me.status !== 200) throw new Error(`refresh through ${target.url} answered ${answer.status} ${JSON.stringify(answer.body)}; GET /me with its token ${me.status}`);
    answers.push(answer);
  }
  if (shape(answers[0]!) !== shape(answers[1]!)) throw new Error(`service and floor answer POST /tokens differently:\n${shape(answers[0]!)}\n${shape(answers[1]!)}`);
  print(`same answer from service and floor: ${shape(answers[0]!)}`);

  const script = refreshScripts(db, admin, CONNECTIONS);
  const run = (label: string, target: Target & { url: string }) => async (seconds: number) =>
    measure(label, `${target.url}/tokens`, target, { connections: CONNECTIONS, seconds, script: await script() });

  print(machineLine(`load generator wrk -t2 -c${CONNECTIONS}; service: NODE_ENV=production, LOG_LEVEL=info, access log to /dev/null, DB_POOL_MAX=10; floor: pool of 10`));
  print(`warming up each server for ${WARM_UP} s`);
  for (const target of [targets.floor, targets.service]) await wrk(`${target.url}/tokens`, { connections: CONNECTIONS, seconds: WARM_UP, script: await script() });

  await settleBeforeMeasuring(database);
  await quietBefore();

  print(`\nPOST /tokens, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION} s per measurement`);
  const rounds: Record<'floor' | 'service', Measurement>[] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    print(`round ${round}`);
    const r = await measureInTurn(round, { floor: run('floor', targets.floor), service: run('service', targets.service) }, { seconds: DURATION });
    print(describe(r.floor));
    print(describe(r.service));
    print(`  service/floor ${percent(r.service.rps / r.floor.rps)}`);
    rounds.push(r);
  }

  const ratios = rounds.map((r) => r.service.rps / r.floor.rps);
  const ms = (v: number) => v.toFixed(2);
  const row = (label: string, key: 'floor' | 'service', ratio: string) => {
    const m = medianOf(rounds.map((r) => r[key]));
    return [label, range(rounds.map((r) => r[key].rps), (v) => v.toFixed(0)), m.p50.toFixed(1), m.p99.toFixed(1), ms(m.nodeMs), ms(m.postgresMs), ms(m.nodeMs + m.postgresMs), ratio];
  };
  const steal = median(rounds.flatMap((r) => [r.floor.steal, r.service.steal]));
  print(`\nmedians over ${ROUNDS} rounds [range] (host steal: median ${percent(steal)} of the machine's CPU time):\n`);
  print(
    markdownTable(
      ['POST /tokens', 'req/s', 'p50 ms', 'p99 ms', 'Node CPU ms/req', 'PostgreSQL CPU ms/req', 'together', 'ratio'],
      [row('floor', 'floor', '–'), row('**service**', 'service', `**${range(ratios, percent)} of the floor**`)],
    ),
  );
  const medians = medianOf(rounds.map((r) => r.service));
  const quiet = quietness(rounds.flatMap((r) => [r.floor, r.service]));
  print(`\n${quiet.text}`);
  const verdict = verdictFor(quiet.quiet);
  print('\ntargets (medians):');
  print(`  service >= 80 % of the floor:         ${percent(median(ratios))} ${verdict(median(ratios) >= 0.8)}`);
  print(`  CPU per refresh <= 1.8 ms (Node + PG): ${ms(medians.nodeMs + medians.postgresMs)} ${verdict(medians.nodeMs + medians.postgresMs <= 1.8)}`);
});
