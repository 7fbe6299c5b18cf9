// What PostgreSQL does per request of one person's week, for the service and for its floor, under
// the benchmark's load: transactions, rows read, buffers touched, rows written (pg_stat_database
// deltas over a measurement, divided by its answered requests), beside the CPU it spent. When
// PostgreSQL's CPU per request reads higher for the service than for the floor on the same two
// statements, this tells more work from the same work done less efficiently (or measured in a
// noisier moment): equal counts with unequal CPU is the latter.
// Usage: node --import tsx bench/database-work.ts (the bench_meetings database, as meetings-week.ts
// seeds it; BENCH_ROUNDS 2, BENCH_DURATION 5 s, 32 connections). `make bench` runs it on 100,000
// meetings (BENCH_MEETINGS), in a throwaway cluster of its own: what it compares is the two sides'
// counts, which do not need the million the week's timing does.
import { sql } from 'kysely';
import { SERVICE_ENV, SERVICE_SCRIPT, startProcess } from './support/process.js';
import { runBenchmark } from './support/run.js';
import { benchCredentials, benchDatabase, settleBeforeMeasuring } from './support/database.js';
import { describe, machineLine, markdownTable, measure, print, quietBefore, type Measurement } from './support/measure.js';
import { floorBeside } from './support/compare.js';
import { medianPersonWeek, seedMeetingsOnce } from './support/meetings.js';
import { wrk } from './support/wrk.js';

const CONNECTIONS = 32;
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
/** A backend reports its counts at most once a second, and an idle one within 10 s (PostgreSQL 15's PGSTAT_IDLE_INTERVAL). */
const STATS_SETTLE_MS = 11_000;
const COUNTERS = ['xact_commit', 'xact_rollback', 'tup_returned', 'tup_fetched', 'blks_hit', 'blks_read', 'tup_inserted', 'tup_updated', 'tup_deleted'] as const;

runBenchmark(() => benchDatabase('bench_meetings', { migrate: false }), async (database, children) => {
  const { db } = database;
  const service = await startProcess(SERVICE_SCRIPT, { DATABASE_URL: database.url, ...SERVICE_ENV });
  children.push(service.child);
  await seedMeetingsOnce(database);
  const { path } = await medianPersonWeek(db);
  const { secret, bearer } = await benchCredentials(db, 'meetings.list');
  const targets = await floorBeside(service, database, children);
  const credentials = [
    ['API key', { 'x-api-key': secret }],
    ['bearer', await bearer()],
  ] as const;

  const counters = async () => {
    await sql`select pg_stat_clear_snapshot()`.execute(db);
    const row = (await sql<Record<string, string>>`select * from pg_stat_database where datname = current_database()`.execute(db)).rows[0]!;
    return COUNTERS.map((name) => Number(row[name]));
  };
  const settle = () => new Promise((resolve) => setTimeout(resolve, STATS_SETTLE_MS));

  print(machineLine(`wrk -t2 -c${CONNECTIONS}, ${DURATION} s per measurement, ${ROUNDS} rounds; GET ${path}`));
  for (const target of [targets.floor, targets.service]) {
    for (const [, headers] of credentials) await wrk(`${target.url}${path}`, { connections: CONNECTIONS, seconds: DURATION, headers });
  }
  await settle();
  await settleBeforeMeasuring(database);
  await quietBefore();
  const rows: string[][] = [];
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [credential, headers] of credentials) {
      for (const [side, target] of [['floor', targets.floor], ['service', targets.service]] as const) {
        const before = await counters();
        const m: Measurement = await measure(`${side}, ${credential}`, `${target.url}${path}`, target, { connections: CONNECTIONS, seconds: DURATION, headers });
        await settle();
        const after = await counters();
        print(describe(m));
        const perRequest = after.map((value, i) => ((value - before[i]!) / Math.max(1, m.requests)).toFixed(2));
        rows.push([`${round}`, m.label, m.rps.toFixed(0), m.postgresMs.toFixed(2), ...perRequest]);
      }
    }
  }
  print(`\nper answered request (pg_stat_database of the benchmark's database; the counts include the service's own background statements):\n`);
  print(markdownTable(['round', 'server, credential', 'req/s', 'PostgreSQL CPU ms', ...COUNTERS], rows));
});
