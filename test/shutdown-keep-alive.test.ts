// SIGTERM with clients talking straight to the service (no proxy to retry for them): 16 keep-alive
// clients send GET /users in a loop through the signal. Every request is either answered or
// refused at connect (the client knows nothing was sent); none dies with a reset, which would
// leave its client not knowing whether the request ran. Readiness fails first, and every answer
// of the drain carries `Connection: close`.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { startServerProcess } from './support/server-process.js';
import { makeApiKey } from './support/access-fixtures.js';

const CLIENTS = 16;
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

interface Outcome {
  client: number;
  sentAfterSignal: boolean;
  status?: number;
  connection?: string;
  error?: string;
}

/** One request on the agent's keep-alive connection; a failure is recorded by its error code. */
function get(agent: http.Agent, port: number, path: string, headers: Record<string, string>): Promise<Omit<Outcome, 'sentAfterSignal' | 'client'>> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection }));
      res.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
  });
}

describe('SIGTERM with direct keep-alive clients', () => {
  it('answers or refuses at connect every request, resets none, and fails readiness first', { timeout: 120_000 }, async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const server = await startServerProcess({ DATABASE_URL: database.url, SHUTDOWN_GRACE_MS: '20000', SWEEP_INTERVAL_S: '0' });
    const headers = { 'x-api-key': key.secret };
    let signalled = false;
    let exited = false;
    void server.exited.then(() => (exited = true));
    const outcomes: Outcome[] = [];
    // Each client its own connection, reused as fast as it answers, until the process is gone.
    const clients = Array.from({ length: CLIENTS }, async (_, client) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      while (!exited) {
        const sentAfterSignal = signalled;
        const outcome = await get(agent, server.port, '/users?limit=5', headers);
        outcomes.push({ client, sentAfterSignal, ...outcome });
        if (outcome.error === 'ECONNREFUSED') await new Promise((r) => setTimeout(r, 5));
      }
      agent.destroy();
    });
    // Enough answers before the signal that every connection is open and busy.
    while (outcomes.filter((o) => o.status === 200).length < 20 * CLIENTS) await new Promise((r) => setTimeout(r, 20));
    // A probe on a keep-alive connection of its own, open (and idle) when the signal comes.
    const probe = new http.Agent({ keepAlive: true, maxSockets: 1 });
    expect((await get(probe, server.port, '/readyz', {})).status).toBe(200);
    signalled = true;
    server.child.kill('SIGTERM');
    await expect.poll(() => server.output(), { timeout: 10_000, interval: 10 }).toContain('shutting down');
    const readiness = await get(probe, server.port, '/readyz', {});
    const code = await server.exited;
    await Promise.all(clients);
    probe.destroy();

    const before = outcomes.filter((o) => !o.sentAfterSignal);
    const after = outcomes.filter((o) => o.sentAfterSignal);
    const resets = outcomes.filter((o) => o.error && o.error !== 'ECONNREFUSED');
    process.stdout.write(
      `shutdown keep-alive figures ${JSON.stringify({ before: before.length, after: after.length, answeredAfter: after.filter((o) => o.status).length, refusedAfter: after.filter((o) => o.error === 'ECONNREFUSED').length, resets: resets.length })}\n`,
    );
    expect(resets, 'no request died with a reset').toEqual([]);
    expect(outcomes.filter((o) => o.status !== undefined).every((o) => o.status === 200)).toBe(true);
    // Each connection ended by an answer telling its client to close it: the drain never closed
    // one under a client that could be writing onto it.
    for (let client = 0; client < CLIENTS; client++) {
      const answers = outcomes.filter((o) => o.client === client && o.status !== undefined);
      expect(answers.at(-1)?.connection, `client ${client}'s last answer`).toBe('close');
    }
    expect(readiness).toMatchObject({ status: 503, connection: 'close' });
    expect(code).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });
});
