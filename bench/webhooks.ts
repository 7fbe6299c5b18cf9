// What events cost and how fast they leave (docs/BENCHMARKS.md, "Events and webhooks"),
// the service in its own process on real PostgreSQL, a receiver on loopback in this process that
// answers 204 at once (what the receiver does is not measured):
//  1. The create's cost: POST /tasks (API key, wrk) for BENCH_DURATION seconds by BENCH_CONNECTIONS
//     clients, alternately with no endpoint enabled and with one endpoint subscribed to
//     task.created, BENCH_ROUNDS rounds: the ratio of the two throughputs, round by round. Twice:
//     a. on a process that does not deliver (WEBHOOKS_DELIVER=false): what a subscriber adds to the
//        create itself (nothing is meant to: the create writes its event either way, and the
//        workers fan it out; docs/EVENTS.md, "Fan-out");
//     b. on a process that delivers each event as it serves the creates: the create, its fan-out
//        and its delivery (an HTTP request, its signature, the claim and the result) on the same cores.
//  2. Delivery throughput: BENCH_EVENTS events written at once in the database, then one NOTIFY:
//     the time until the one service process has fanned them out and delivered them all.
//  3. Latency at rest: BENCH_LATENCY_CREATES creates one at a time, BENCH_LATENCY_GAP_MS apart;
//     for each, from the moment its request was sent (so an upper bound of "from commit") to the
//     moment the receiver got its event.
// Prints a markdown table at the end.
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { DELIVERY_CHANNEL } from '../src/db/channels.js';
import { bundlePath } from '../src/paths.js';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess, stopProcess } from './support/process.js';
import { benchDatabase, settleBeforeMeasuring, operatorKey } from './support/database.js';
import { describe, loadAverages, machineLine, markdownTable, measure, median, percent, print, quietBefore, quietness, range, type Measurement, type Target } from './support/measure.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const LATENCY_CREATES = Number(process.env.BENCH_LATENCY_CREATES ?? 200);
const LATENCY_GAP_MS = Number(process.env.BENCH_LATENCY_GAP_MS ?? 50);

/** A receiver that answers 204 at once and tells when each event arrived, by the task it carries. */
function startReceiver(): Promise<{ server: Server; url: string; received: () => number; arrivals: Map<string, number> }> {
  let received = 0;
  const arrivals = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received++;
      const taskId = (JSON.parse(Buffer.concat(chunks).toString()) as { data?: { id?: string } }).data?.id;
      if (taskId) arrivals.set(taskId, performance.now());
      res.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received: () => received, arrivals })),
  );
}

const createTask = (url: string, secret: string) =>
  fetch(`${url}/tasks`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': secret }, body: JSON.stringify({ title: 'Call the customer back', priority: 'high' }) });

/** wrk's script of the creates: every request the same POST /tasks. */
function createScript(dir: string): string {
  const file = join(dir, 'create-task.lua');
  writeFileSync(file, `wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = '${JSON.stringify({ title: 'Call the customer back', priority: 'high' })}'\n`);
  return file;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!;

async function main() {
  const database = await benchDatabase('bench_webhooks');
  const { db } = database;
  const receiver = await startReceiver();
  const dir = mkdtempSync(join(tmpdir(), 'bench-webhooks-'));
  const script = createScript(dir);
  let service: Awaited<ReturnType<typeof startProcess>> | undefined;
  let writer: Awaited<ReturnType<typeof startProcess>> | undefined;
  try {
    const { secret } = await operatorKey(db, { name: 'bench', permissions: ['tasks.create', 'tasks.read', 'webhooks.manage'] });
    // Loopback receivers are allowed only with this setting (docs/EVENTS.md, SSRF).
    const env = { DATABASE_URL: database.url, ...SERVICE_ENV, WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' };
    writer = await startProcess(SERVICE_SCRIPT, { ...env, WEBHOOKS_DELIVER: 'false' });
    const made = await fetch(`${writer.url}/webhook-endpoints`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': secret },
      body: JSON.stringify({ url: receiver.url, event_types: ['task.created'], description: 'bench' }),
    });
    if (made.status !== 201) throw new Error(`POST /webhook-endpoints answered ${made.status}: ${await made.text()}`);
    const endpointId = ((await made.json()) as { webhook_endpoint: { id: string } }).webhook_endpoint.id;
    const subscribed = (enabled: boolean) => db.updateTable('webhook_endpoints').set({ enabled }).where('id', '=', endpointId).execute();
    // Still to do: deliveries pending, and events the relay has not fanned out yet.
    const pending = async () =>
      Number(
        (
          await sql<{ n: string }>`select (select count(*) from webhook_deliveries where status = 'pending')
            + (select count(*) from events e, event_relay r where (e.xid, e.seq) > (r.last_xid, r.last_seq)) as n`.execute(db)
        ).rows[0]!.n,
      );
    const drained = async (timeoutMs: number) => {
      const until = Date.now() + timeoutMs;
      while ((await pending()) > 0) {
        if (Date.now() > until) throw new Error(`deliveries still pending after ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    print(machineLine(`load generator wrk -t2 -c${CONNECTIONS}, the receiver in this process; service: ${SERVICE_SCRIPT}, NODE_ENV=production, DB_POOL_MAX=10`));
    await settleBeforeMeasuring(database);
    await quietBefore();

    // 1. The create's cost, on a process that does not deliver (a), then on one that does (b).
    const creates = async (server: Awaited<ReturnType<typeof startProcess>>, label: string, afterEach?: () => Promise<void>) => {
      const target: Target = { pid: server.child.pid!, postmaster: database.postmaster };
      const run = (what: string) => measure(`${label}, ${what}`, `${server.url}/tasks`, target, { connections: CONNECTIONS, seconds: DURATION, headers: { 'x-api-key': secret }, script });
      await subscribed(false);
      await wrk(`${server.url}/tasks`, { connections: CONNECTIONS, seconds: DURATION, headers: { 'x-api-key': secret }, script }); // warm-up
      const rounds: { plain: Measurement; subscribed: Measurement }[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        await subscribed(false);
        const plain = await run('no endpoint');
        await subscribed(true);
        const withEndpoint = await run('one endpoint subscribed');
        await afterEach?.();
        print(`round ${round}:\n${describe(plain)}\n${describe(withEndpoint)}\n  with / without: ${percent(withEndpoint.rps / plain.rps)}`);
        rounds.push({ plain, subscribed: withEndpoint });
      }
      return rounds;
    };
    const own = await creates(writer, 'not delivering');
    await stopProcess(writer.child);
    writer = undefined;
    service = await startProcess(SERVICE_SCRIPT, env);
    await drained(600_000); // what the writer left pending
    const whole = await creates(service, 'delivering', () => drained(60_000));

    // 2. Delivery throughput: the contract's own task.created example, one event and delivery each.
    const contract = JSON.parse(readFileSync(bundlePath('snake'), 'utf8')) as { webhooks: Record<string, { post: { requestBody: { content: Record<string, { example: Record<string, unknown> }> } } }> };
    const example = contract.webhooks['task.created']!.post.requestBody.content['application/json']!.example;
    const before = receiver.received();
    const events = Array.from({ length: EVENTS }, () => ({ id: randomUUID(), occurredAt: new Date() }));
    for (let i = 0; i < events.length; i += 1000) {
      const batch = events.slice(i, i + 1000);
      await db
        .insertInto('events')
        .values(batch.map((e) => ({ id: e.id, type: 'task.created', occurred_at: e.occurredAt, audit_event_id: null, required_permission: 'tasks.read', payload: JSON.stringify({ ...example, id: e.id, occurred_at: e.occurredAt.toISOString() }) })))
        .execute();
    }
    const started = performance.now();
    await sql`select pg_notify(${DELIVERY_CHANNEL}, '')`.execute(db);
    await drained(600_000);
    const seconds = (performance.now() - started) / 1000;
    const delivered = receiver.received() - before;
    if (delivered < EVENTS) throw new Error(`the receiver got ${delivered} of ${EVENTS} events`);
    print(`delivery: ${EVENTS} events in ${seconds.toFixed(2)} s: ${(EVENTS / seconds).toFixed(0)} events/s`);

    // 3. Latency at rest.
    await subscribed(true);
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_CREATES; i++) {
      const sent = performance.now();
      const res = await createTask(service.url, secret);
      const { id } = (await res.json()) as { id: string };
      const until = Date.now() + 10_000;
      while (!receiver.arrivals.has(id)) {
        if (Date.now() > until) throw new Error(`the event of task ${id} did not arrive within 10 s`);
        await new Promise((r) => setTimeout(r, 1));
      }
      latencies.push(receiver.arrivals.get(id)! - sent);
      await new Promise((r) => setTimeout(r, LATENCY_GAP_MS));
    }
    latencies.sort((a, b) => a - b);
    print(`latency at rest over ${LATENCY_CREATES} creates: p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p99 ${quantile(latencies, 0.99).toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`);

    const quiet = quietness([...own, ...whole].flatMap((r) => [r.plain, r.subscribed]));
    print(`\n${quiet.text}`);
    print(`\nmedians over ${ROUNDS} rounds [range], load average at the end ${loadAverages()}:\n`);
    print(
      markdownTable(
        ['measure', 'result', 'target'],
        [
          ...([
            ['a process that does not deliver', own],
            ['a process that delivers as it serves', whole],
          ] as const).flatMap(([label, rounds]) => [
            [`POST /tasks, ${label}, no endpoint enabled`, `${range(rounds.map((r) => r.plain.rps), (v) => v.toFixed(0))} req/s, p50 ${median(rounds.map((r) => r.plain.p50)).toFixed(1)} ms`, '–'],
            [`POST /tasks, ${label}, one endpoint subscribed`, `${range(rounds.map((r) => r.subscribed.rps), (v) => v.toFixed(0))} req/s, p50 ${median(rounds.map((r) => r.subscribed.p50)).toFixed(1)} ms`, '–'],
            [`**throughput with the endpoint / without, ${label}**`, `**${range(rounds.map((r) => r.subscribed.rps / r.plain.rps), percent)}**`, '≥ 95 %'],
          ]),
          ['**delivery, one process**', `**${(EVENTS / seconds).toFixed(0)} events/s** (${EVENTS} events)`, '≥ 500 events/s'],
          ['**request sent → event received, at rest**', `p50 ${quantile(latencies, 0.5).toFixed(1)} ms, **p99 ${quantile(latencies, 0.99).toFixed(1)} ms**`, 'p99 < 1 s'],
        ],
      ),
    );
  } finally {
    if (writer) await stopProcess(writer.child);
    if (service) await stopProcess(service.child);
    receiver.server.close();
    await database.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
