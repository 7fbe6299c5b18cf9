// What a benchmark checks and shows before it measures a service against its floor: that both give
// the same answer, byte for byte (else the comparison means nothing), and the plans of the statements.
import pg from 'pg';
import type { ChildProcess } from 'node:child_process';
import { print, type Target } from './measure.js';
import { startProcess } from './process.js';
import type { BenchDatabase } from './database.js';

/** Throws unless the two servers (the service and the floor, or as `names` calls them) answer GET `path` the same (status, type, body) and with 200, for each credential. */
export async function expectSameAnswers(
  first: { url: string },
  second: { url: string },
  path: string,
  credentials: readonly (readonly [string, Record<string, string>])[],
  names: readonly [string, string] = ['service', 'floor'],
): Promise<void> {
  for (const [credential, headers] of credentials) {
    const answer = async (s: { url: string }) => {
      const res = await fetch(`${s.url}${path}`, { headers });
      return `${res.status} ${res.headers.get('content-type')} ${await res.text()}`;
    };
    const fromFirst = await answer(first);
    const fromSecond = await answer(second);
    if (fromFirst !== fromSecond) throw new Error(`${names[0]} and ${names[1]} answer GET ${path} (${credential}) differently:\n${fromFirst.slice(0, 300)}\n${fromSecond.slice(0, 300)}`);
    if (!fromFirst.startsWith('200 ')) throw new Error(`GET ${path} answered ${fromFirst.slice(0, 300)}`);
    print(`same answer from ${names[0]} and ${names[1]}, ${credential}: ${fromFirst.slice(0, 40)}... (${fromFirst.length} bytes)`);
  }
}

/** Prints each statement's plan as PostgreSQL runs it (EXPLAIN ANALYZE, BUFFERS), warm: each is run once first. */
export async function printPlans(url: string, statements: readonly { label: string; text: string; values: unknown[] }[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const { label, text, values } of statements) {
      await client.query(text, values);
      const plan = await client.query<{ 'QUERY PLAN': string }>(`explain (analyze, buffers, costs off) ${text}`, values);
      print(`\n${label}:\n${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
    }
  } finally {
    await client.end();
  }
}

/** The floor (bench/floor.ts) started beside the service, on its database, and both as measurement targets. */
export async function floorBeside(service: { url: string; child: ChildProcess }, database: BenchDatabase, servers: ChildProcess[]): Promise<Record<'service' | 'floor', Target & { url: string }>> {
  const floor = await startProcess('bench/floor.ts', { DATABASE_URL: database.url });
  servers.push(floor.child);
  return {
    service: { url: service.url, pid: service.child.pid!, postmaster: database.postmaster },
    floor: { url: floor.url, pid: floor.child.pid!, postmaster: database.postmaster },
  };
}
