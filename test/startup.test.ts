// What the service says when it starts, run as an operator runs it (a real process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { startServerProcess } from './support/server-process.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('start-up', () => {
  it('names the address it really listens on, not localhost', async () => {
    const server = await startServerProcess({ DATABASE_URL: database.url, HOST: '127.0.0.1' });
    try {
      const line = server.records().find((r) => typeof r.msg === 'string' && r.msg.startsWith('listening on'));
      expect(line).toMatchObject({ msg: `listening on http://127.0.0.1:${server.port}`, address: '127.0.0.1', port: server.port });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
