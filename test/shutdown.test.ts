// SIGTERM: the server stops accepting connections, finishes the requests in flight, closes the
// pool and exits 0.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { budget } from './support/budgets.js';
import { startServerProcess } from './support/server-process.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('graceful shutdown', () => {
  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', { timeout: budget({ serverStart: 1 }) }, async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url });
    const { port } = server;

    // A request whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({ session: { email: 'ada@example.com', password: 7 } });
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write(`POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 200));
    server.child.kill('SIGTERM');
    await expect.poll(() => server.output(), { timeout: 10_000, interval: 50 }).toContain('shutting down');

    // No new connections once shutting down.
    const refused = await new Promise<boolean>((resolve) => {
      const probe = connect(port, '127.0.0.1');
      probe.on('error', () => resolve(true));
      probe.on('connect', () => {
        probe.destroy();
        resolve(false);
      });
    });
    expect(refused).toBe(true);

    socket.write(body.slice(10));
    await closed;
    expect(response).toMatch(/^HTTP\/1\.1 400 /); // answered in full (the body is invalid on purpose)
    expect(response).toContain('validation_failed');
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('"msg":"stopped"');
  });
});
