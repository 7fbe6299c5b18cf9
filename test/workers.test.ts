// WORKERS=2: one primary and two worker processes sharing the port (Node's cluster module). Both
// workers answer; the metrics listener serves their sum; a worker that dies is replaced; SIGTERM
// drains both and the primary exits 0.
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { A_FREE_PORT, startServerProcess } from './support/server-process.js';
import { createUser } from './support/sessions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** A request on a connection of its own, so the primary hands each to the next worker in turn. */
function get(url: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      })
      .on('error', reject);
  });
}

describe('WORKERS', () => {
  it('runs that many processes on one port, shares the hashing threads, sums their metrics, replaces a dead one, and drains them all on SIGTERM', { timeout: 180_000 }, async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, WORKERS: '2', METRICS_PORT: A_FREE_PORT, SWEEP_INTERVAL_S: '0' });
    const workerPids = () => new Set(server.records().filter((r) => String(r.msg).startsWith('listening on')).map((r) => r.pid));
    let victim: number | undefined;
    try {
      const metricsPort = server.env.METRICS_PORT!;
      await expect.poll(() => workerPids().size, { timeout: 60_000, interval: 100 }).toBe(2);

      for (let i = 0; i < 20; i++) expect((await get(`${server.url}/livez`)).status).toBe(200);
      // Polled: each process writes its access lines in blocks, at the latest 100 ms later (src/logger.ts).
      const answeredBy = () => new Set(server.records().filter((r) => r.msg === 'request completed').map((r) => r.pid));
      await expect.poll(answeredBy, { timeout: 10_000, interval: 100 }).toEqual(workerPids());
      expect(answeredBy().has(server.child.pid)).toBe(false); // the primary serves no request

      const answered = server.records().filter((r) => r.msg === 'request completed').length;
      const scraped = await get(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(scraped.status).toBe(200);
      const count = scraped.text.split('\n').find((l) => l.startsWith('backoffice_http_request_duration_seconds_count{operation="none",status_class="2xx"}'));
      expect(Number(count?.split(' ')[1])).toBeGreaterThanOrEqual(answered); // both workers' counts, summed

      // One sign-in starts the hashing threads of the worker it lands on: its share of the cores, plus 2.
      const user = await createUser(database.db);
      const signedIn = await fetch(`${server.url}/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: { email: user.email, password: user.password } }) });
      expect(signedIn.status).toBe(201);
      const threads = (await get(`http://127.0.0.1:${metricsPort}/metrics`)).text
        .split('\n')
        .filter((l) => l.startsWith('backoffice_password_hash_threads{'))
        .reduce((sum, l) => sum + Number(l.split(' ')[1]), 0);
      expect(threads).toBe(Math.ceil(availableParallelism() / 2) + 2);

      // A worker that dies is replaced.
      [victim] = [...workerPids()] as number[];
      process.kill(victim!, 'SIGKILL');
      await expect.poll(() => workerPids().size, { timeout: 60_000, interval: 100 }).toBe(3);
      expect(server.output()).toContain('worker exited');

      server.child.kill('SIGTERM');
      const code = await server.exited;
      expect(code, server.output().split('\n').filter((l) => !l.includes('request completed')).join('\n')).toBe(0);
      const stopped = server.records().filter((r) => r.msg === 'stopped');
      expect(stopped.map((r) => r.pid).sort()).toEqual([...workerPids()].filter((pid) => pid !== victim).concat(server.child.pid).sort());
    } finally {
      // A failed step leaves no process behind: the primary, and the workers it still has. Only
      // while the primary runs: once it has exited its workers have too, and their ids (like the
      // killed one's) may belong to other processes by now.
      if (server.child.exitCode === null && server.child.signalCode === null) {
        for (const pid of [...workerPids()].filter((pid) => pid !== victim).concat(server.child.pid) as number[]) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      }
    }
  });

  it('takes 1 to 256', () => {
    expect(testConfig().workers).toBe(1);
    expect(testConfig({ WORKERS: '4' }).workers).toBe(4);
    for (const bad of ['0', '1.5', '257']) expect(() => testConfig({ WORKERS: bad })).toThrow(/WORKERS/);
  });
});
