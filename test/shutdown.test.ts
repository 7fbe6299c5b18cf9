// SIGTERM: the server stops accepting connections, finishes the requests in flight, closes the
// pool and exits 0.
import { spawn } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../src/paths.js';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

describe('graceful shutdown', () => {
  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', { timeout: budget({ serverStart: 1 }) }, async () => {
    const port = await freePort();
    const server = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts')], {
      env: { ...process.env, DATABASE_URL: database.url, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test', METRICS_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
    await expect.poll(() => output, { timeout: 30_000, interval: 100 }).toContain('listening on');

    // A request whose body is still arriving when SIGTERM comes.
    const body = JSON.stringify({ session: { email: 'ada@example.com', password: 7 } });
    const socket = connect(port, '127.0.0.1');
    let response = '';
    socket.on('data', (chunk) => (response += chunk.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
    socket.write(`POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 10)}`);
    await new Promise((r) => setTimeout(r, 200));
    server.kill('SIGTERM');
    await expect.poll(() => output, { timeout: 10_000, interval: 50 }).toContain('shutting down');

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
    expect(await exited).toBe(0);
    expect(output).toContain('"msg":"stopped"');
  });
});
