// What the service says when it starts, run as an operator runs it (a real process).
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { startServerProcess } from './support/server-process.js';
import { BUDGET_MS, budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('start-up', () => {
  it('names the address it really listens on, not localhost', { timeout: budget({ serverStart: 1 }) }, async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    try {
      // The line is written once the socket listens; its bytes may reach this process after /livez answers.
      const line = () => server.records().find((r) => typeof r.msg === 'string' && r.msg.startsWith('listening on'));
      await expect.poll(line, { timeout: 10_000 }).toMatchObject({ msg: `listening on http://127.0.0.1:${server.port}`, address: '127.0.0.1', port: server.port });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe('make run on an empty database', () => {
  it("puts the first administrator's password in an owner-only file, never in the log, and makes them replace it", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-first-start-'));
    // Up once PGlite has started and migrated in the process.
    const server = await startServerProcess({ DATABASE_URL: undefined, DATA_DIR: dataDir }, BUDGET_MS.serverStart + BUDGET_MS.pgliteStart);
    try {
      const file = join(dataDir, 'first-administrator.txt');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const password = /password: (\S+)/.exec(readFileSync(file, 'utf8'))![1]!;
      expect(server.output()).not.toContain(password);
      expect(server.output()).toContain(file);

      const call = (method: string, path: string, body?: object, token?: string) =>
        fetch(`${server.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
      const set = (await (await call('POST', '/sessions', { session: { email: 'admin@backoffice.local', password } })).json()) as { access_token: string };
      const refused = await call('GET', '/users', undefined, set.access_token);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { code: string }).code).toBe('password_change_required');
      const changed = await call('PUT', '/me/password', { current_password: password, new_password: 'my own long passphrase' }, set.access_token);
      expect(changed.status).toBe(204);
      expect((await call('GET', '/users', undefined, set.access_token)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, budget({ serverStart: 1, pgliteStart: 1 }));
});
