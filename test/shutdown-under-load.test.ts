// SIGTERM under load: requests in flight when the signal arrives (slow uploads and a flood of
// keep-alive requests) all complete with their normal answer, and the process exits 0 within
// the grace period.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { startServerProcess } from './support/server-process.js';
import { HttpClient } from './support/http-client.js';
import { budget } from './support/budgets.js';

// Long, so a busy machine's slowness is never taken for a request cut at the end of the grace.
const GRACE_MS = 60_000;
let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** A request whose headers and half its body are sent; the rest is sent by finish(). */
async function slowUpload(port: number) {
  const body = JSON.stringify({ session: { email: 'ada@example.com', password: 7 } });
  const socket = connect(port, '127.0.0.1');
  let response = '';
  socket.on('data', (chunk) => (response += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  socket.write(`POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
  return {
    async finish() {
      socket.write(body.slice(10));
      await closed;
      return response;
    },
  };
}

describe('SIGTERM under load', () => {
  it('completes every in-flight request and exits 0 within the grace period', { timeout: budget({ serverStart: 1 }) + 2 * GRACE_MS }, async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, SHUTDOWN_GRACE_MS: String(GRACE_MS) });
    const client = new HttpClient(server.url, 8);
    const uploads = await Promise.all(Array.from({ length: 20 }, () => slowUpload(server.port)));

    // A flood of keep-alive requests; each worker stops sending new ones once SIGTERM is sent.
    let signalled = false;
    const answered: number[] = [];
    const failed: string[] = [];
    const workers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = w; !signalled; i++) {
        const path = i % 2 ? '/readyz' : '/users';
        try {
          answered.push((await client.send({ method: 'GET', path }, { timeoutMs: GRACE_MS * 2 })).status);
        } catch (err) {
          failed.push(`${path}: ${(err as Error).message}`);
        }
      }
    });
    // At least a second of flood, and enough answers to mean something, however slow the machine.
    const floodUntil = Date.now() + GRACE_MS;
    await new Promise((r) => setTimeout(r, 1_000));
    while (answered.length <= 60 && Date.now() < floodUntil) await new Promise((r) => setTimeout(r, 100));
    const signalledAt = Date.now();
    signalled = true;
    server.child.kill('SIGTERM');
    await Promise.all(workers);
    const responses = await Promise.all(uploads.map((u) => u.finish()));
    const code = await server.exited;
    const exitedAfter = Date.now() - signalledAt;
    client.close();

    expect(failed, 'no request of the flood failed').toEqual([]);
    expect(answered.length).toBeGreaterThan(50);
    expect(answered.every((status) => status === 200 || status === 401)).toBe(true);
    for (const response of responses) {
      expect(response).toMatch(/^HTTP\/1\.1 400 /);
      expect(response).toContain('validation_failed');
    }
    expect(code).toBe(0);
    expect(exitedAfter).toBeLessThan(GRACE_MS);
    expect(server.output()).toContain('"msg":"stopped"');
    process.stdout.write(`shutdown figures ${JSON.stringify({ floodAnswered: answered.length, slowUploads: responses.length, exitedAfterMs: exitedAfter })}\n`);
  });
});
