// The real Prism on the bundled contract: what frontend teams develop against.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLED_SPEC_PATH, PROJECT_ROOT } from '../src/paths.js';
import { join } from 'node:path';
import { spec } from './support/context.js';

let prism: ChildProcess;
let base: string;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  prism = spawn(join(PROJECT_ROOT, 'node_modules/.bin/prism'), ['mock', BUNDLED_SPEC_PATH, '--host', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Prism did not start within 30 s')), 30_000);
    prism.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Prism is listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
    prism.on('exit', (code) => reject(new Error(`Prism exited with ${code}`)));
  });
});

afterAll(() => {
  prism?.kill('SIGTERM');
});

describe('Prism mock of the contract', () => {
  it('answers GET /users with the documented example when credentials are sent', async () => {
    const res = await fetch(`${base}/users`, { headers: { 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(res.status).toBe(200);
    const documented = spec.components.responses.UserPage.content['application/json'].example;
    expect(await res.json()).toEqual(documented);
  });

  it('answers GET /users with 401 without credentials', async () => {
    const res = await fetch(`${base}/users`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('answers POST /sessions with the documented token set', async () => {
    const res = await fetch(`${base}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ session: { email: 'ada@example.com', password: 'correct horse battery staple' } }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
  });
});
