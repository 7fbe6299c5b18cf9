// A window's end (docs/PARTNER-KEYS.md, "At the end of a window"), attacked as a partner would: a
// burst sent to each of three server instances just before a rate-limit window ends, while the
// database answers slowly. Each instance lets its local share through from memory, the next request
// starts a reconciliation that the database holds, and the rest queue behind it; the window ends
// before the database answers. The queued requests must be decided on the total their own
// reconciliation returns (src/limits/limiter.ts), not let through on the count from before. The
// real app on real PostgreSQL; the database is made slow by the test holding the counter's row
// lock, the instances share a manual clock, and reconcile only on demand (as src/main.ts's
// background step is not started): nothing depends on the machine's speed. The property over every
// interleaving: test/rate-limiter.test.ts.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { HttpClient, type RawResponse } from './support/http-client.js';
import { ManualClock } from '../src/clock.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';

const N = 100;
const PER_SECONDS = 10;
const INSTANCES = 3;
/** floor(0.1 × N): what one instance may admit from memory before it must reconcile. */
const SHARE = 10;

let database: TestDatabase;
const servers: Server[] = [];
const clients: HttpClient[] = [];
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  for (const client of clients) client.close();
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  await database?.destroy();
});

it('burst at the window\'s end on three processes: at most N + (P − 1) × floor(0.1 × N) get through, and every one of them is counted', async () => {
  // One second before the end of a 10-second window, a minute ahead of the real time.
  const windowStart = Math.ceil(Date.now() / 10_000) * 10_000 + 60_000;
  const clock = new ManualClock(new Date(windowStart + 9_000));
  const keys = new ApiKeyService({ db: database.db, clock });
  const draft = keys.draft(OPERATOR, { name: 'edge-burst', permissions: ['users.list'], rate_limit: { requests: N, per_seconds: PER_SECONDS } });
  const { key, secret } = await database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));

  // Three instances, each counting what reaches its limiter.
  const reached: number[] = [];
  for (let i = 0; i < INSTANCES; i++) {
    const { app, services } = createTestApp(database.db, { clock, env: { RATE_LIMIT_SYNC_INTERVAL_MS: '0' } });
    const admit = services.admission.admit.bind(services.admission);
    reached.push(0);
    services.admission.admit = (...args) => {
      reached[i]!++;
      return admit(...args);
    };
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    servers.push(server);
    clients.push(new HttpClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, N));
  }

  // The slow database: the window's counter row exists, and the test holds its lock.
  const subject = `key:${key.id}/${PER_SECONDS}`;
  const locker = new pg.Client({ connectionString: database.url });
  await locker.connect();
  await locker.query('insert into rate_limit_counters (subject, window_start, window_end, count) values ($1, $2, $3, 0)', [
    subject,
    new Date(windowStart),
    new Date(windowStart + PER_SECONDS * 1000),
  ]);
  await locker.query('begin');
  await locker.query('select count from rate_limit_counters where subject = $1 for update', [subject]);

  let answers: Promise<RawResponse[]>;
  try {
    // N requests to each instance at once, just before the window ends.
    answers = Promise.all(clients.flatMap((client) => Array.from({ length: N }, () => client.send({ method: 'GET', path: '/users?limit=1', headers: { 'x-api-key': secret } }))));
    await expect.poll(() => reached.every((n) => n === N), { timeout: 60_000, interval: 20 }).toBe(true);
    // The window ends while every instance's reconciliation is held by the database.
    clock.advance(2_000);
  } finally {
    await locker.query('commit');
    await locker.end();
  }
  const done = await answers;

  const through = done.filter((res) => res.status === 200).length;
  const refused = done.filter((res) => res.status === 429);
  expect(through + refused.length).toBe(INSTANCES * N);
  // Each instance's share from memory at least; never more than the documented bound.
  expect(through).toBeGreaterThanOrEqual(INSTANCES * SHARE);
  expect(through).toBeLessThanOrEqual(N + (INSTANCES - 1) * SHARE);
  for (const res of refused) {
    expect(res.body).toMatchObject({ code: 'rate_limited' });
    expect(res.headers['retry-after']).toBe('1');
  }
  // Every request let through is in the window's total (a refused one that waited is counted too).
  const { rows } = await database.pool.query<{ count: string }>('select count from rate_limit_counters where subject = $1 and window_start = $2', [subject, new Date(windowStart)]);
  expect(Number(rows[0]!.count)).toBeGreaterThanOrEqual(through);
});
