// Webhook delivery across processes, and the SSRF refusals, as an attacker tries them (issue 30).
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase, testPool } from './support/context.js';
import { authenticatorsWithTestBearer, makeApiKey, testBearer } from './support/access-fixtures.js';
import { createUser } from './support/sessions.js';
import { startReceiver } from './support/webhook-receiver.js';
import { deliverDue } from './support/deliveries.js';
import { startServerProcess } from './support/server-process.js';
import { budget } from './support/budgets.js';
import { systemClock } from '../src/clock.js';
import type { Database } from '../src/db/schema.js';
import { classifyAddress } from '../src/webhooks/ssrf.js';
import { newSigningSecret, sealUnderCurrent } from '../src/webhooks/secrets.js';
import { keyring } from '../src/auth/sealing-keys.js';
import { randomUUID } from 'node:crypto';

type Credential = Record<string, string>;
const PRIVATE_OK = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' };

let database: TestDatabase;
let partner: { id: string; auth: Credential };

function appOn(db: Kysely<Database>, env: Record<string, string> = PRIVATE_OK) {
  const { deps } = createTestApp(db, { clock: systemClock, env });
  return createTestApp(db, { clock: systemClock, env, authenticators: authenticatorsWithTestBearer(deps) });
}

beforeAll(async () => {
  database = await createTestDatabase();
  const user = await createUser(database.db, { permissions: ['tasks.read', 'tasks.create', 'webhooks.manage'] });
  partner = { id: user.id, auth: { authorization: testBearer(user.id) } };
}, budget({ passwordHash: 1 }));
afterAll(() => database.destroy());

async function subscribe(app: ReturnType<typeof appOn>['app'], url: string) {
  const res = await request(app).post('/webhook-endpoints').set(partner.auth).send({ url, event_types: ['task.created'] });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.webhook_endpoint.id as string, secret: res.body.secret as string };
}

const verify = (secret: string, got: { headers: Record<string, unknown>; body: string }) =>
  new Webhook(secret).verify(got.body, {
    'webhook-id': got.headers['webhook-id'] as string,
    'webhook-timestamp': got.headers['webhook-timestamp'] as string,
    'webhook-signature': got.headers['webhook-signature'] as string,
  });

describe('delivery from several processes', () => {
  // Two service instances (in this process) and 80 requests: on a loaded machine that is more than
  // the default 30 s of own work (it timed out at load 10 in a full run beside other engineers' tests).
  it('two service processes deliver each event once, woken by NOTIFY', { timeout: budget({ serverStart: 2 }) }, async () => {
    const first = appOn(database.db);
    const pool = testPool({ connectionString: database.url, max: 5 });
    const otherDb = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const second = appOn(otherDb);
    const receiver = await startReceiver();
    const endpoint = await subscribe(first.app, receiver.url);
    first.services.deliveries.start(database.url);
    second.services.deliveries.start(database.url);
    try {
      const n = 40;
      for (let i = 0; i < n; i++) await request(i % 2 ? first.app : second.app).post('/tasks').set(partner.auth).send({ title: `Task ${i}` }).expect(201);
      await receiver.until(n);
      // Whatever is still to come would come now: give both a few more rounds.
      await new Promise((r) => setTimeout(r, 2500));
      const ids = receiver.received.map((r) => r.headers['webhook-id']);
      expect(ids).toHaveLength(n);
      expect(new Set(ids).size).toBe(n);
      receiver.received.forEach((got) => verify(endpoint.secret, got));
      const rows = await database.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('endpoint_id', '=', endpoint.id).execute();
      expect(rows.every((r) => r.status === 'succeeded' && r.attempts === 1)).toBe(true);
    } finally {
      await Promise.all([first.services.deliveries.stop(), second.services.deliveries.stop()]);
      await database.db.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
      await otherDb.destroy();
      await receiver.close();
    }
  });

  it(
    'a process killed in the middle of a delivery leaves it delivered by the next one, with the same webhook-id',
    async () => {
      const { app } = appOn(database.db);
      const receiver = await startReceiver(['hang']);
      const endpoint = await subscribe(app, receiver.url);
      const env = { DATABASE_URL: database.url, WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_TIMEOUT_MS: '3000', SWEEP_INTERVAL_S: '0' };
      const doomed = await startServerProcess(env);
      try {
        await request(app).post('/tasks').set(partner.auth).send({ title: 'Half sent' }).expect(201);
        await receiver.until(1);
        doomed.child.kill('SIGKILL');
        await doomed.exited;
      } finally {
        if (doomed.child.exitCode === null) doomed.child.kill('SIGKILL');
      }
      const next = await startServerProcess(env);
      try {
        await receiver.until(2);
        expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
        verify(endpoint.secret, receiver.received[1]!);
        await expect.poll(async () => (await database.db.selectFrom('webhook_deliveries').select('status').where('endpoint_id', '=', endpoint.id).executeTakeFirst())?.status, { timeout: 30_000 }).toBe('succeeded');
      } finally {
        await next.stop();
        await receiver.close();
        await database.db.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
      }
    },
    budget({ serverStart: 2 }),
  );
  it(
    'a process started with WEBHOOKS_DELIVER=false writes events, fans none out and sends none; a delivering process does',
    async () => {
      const { app } = appOn(database.db);
      const receiver = await startReceiver();
      const endpoint = await subscribe(app, receiver.url);
      const env = { DATABASE_URL: database.url, WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_POLL_INTERVAL_MS: '200', SWEEP_INTERVAL_S: '0' };
      const writer = await startServerProcess({ ...env, WEBHOOKS_DELIVER: 'false' });
      try {
        const key = await makeApiKey(database.db, ['tasks.create']);
        const made = await fetch(`${writer.url}/tasks`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key.secret }, body: JSON.stringify({ title: 'Written, not sent' }) });
        expect(made.status).toBe(201);
        const task = (await made.json()) as { id: string };
        const event = () => database.db.selectFrom('events').select('id').where('payload', '@>', JSON.stringify({ data: { id: task.id } }) as never).execute();
        const deliveries = () => database.db.selectFrom('webhook_deliveries').select(['status', 'attempts']).where('endpoint_id', '=', endpoint.id).execute();
        expect(await event()).toHaveLength(1);
        // Ten of the writer's poll intervals (and its NOTIFY, if it listened): nothing is fanned out, nothing sent.
        await new Promise((r) => setTimeout(r, 2000));
        expect(receiver.received).toHaveLength(0);
        expect(await deliveries()).toEqual([]);
        const deliverer = await startServerProcess(env);
        try {
          await receiver.until(1);
          verify(endpoint.secret, receiver.received[0]!);
        } finally {
          await deliverer.stop();
        }
      } finally {
        await writer.stop();
        await receiver.close();
        await database.db.deleteFrom('webhook_endpoints').where('id', '=', endpoint.id).execute();
      }
    },
    budget({ serverStart: 2 }),
  );
});

describe('SSRF, with private addresses not allowed', () => {
  const refused = [
    ['loopback', 'https://127.0.0.1/hooks'],
    ['loopback by name', 'https://localhost/hooks'],
    ['loopback IPv6', 'https://[::1]/hooks'],
    ['RFC 1918 10/8', 'https://10.1.2.3/hooks'],
    ['RFC 1918 172.16/12', 'https://172.16.5.4/hooks'],
    ['RFC 1918 192.168/16', 'https://192.168.1.1/hooks'],
    ['link-local', 'https://169.254.10.10/hooks'],
    ['cloud metadata', 'https://169.254.169.254/latest/meta-data/'],
    ['CGNAT 100.64/10', 'https://100.64.0.1/hooks'],
    ['IPv6 unique-local', 'https://[fd12:3456::1]/hooks'],
    ['IPv6 link-local', 'https://[fe80::1]/hooks'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hooks'],
    ['IPv4-mapped private', 'https://[::ffff:a01:203]/hooks'],
    ['unspecified', 'https://0.0.0.0/hooks'],
    ['plain http', 'http://93.184.215.14/hooks'],
  ] as const;
  for (const [name, url] of refused) {
    it(`an endpoint at a ${name} address is refused when saved`, async () => {
      const { app } = appOn(database.db, {});
      const res = await request(app).post('/webhook-endpoints').set(partner.auth).send({ url, event_types: ['task.created'] });
      expect(res.status, res.text).toBe(400);
      expect(res.body.code).toBe('webhook_url_refused');
      expect(await database.db.selectFrom('webhook_endpoints').select('id').where('url', '=', url).execute()).toEqual([]);
    });
  }

  it('cloud metadata addresses stay refused with private addresses allowed', async () => {
    const { app } = appOn(database.db, PRIVATE_OK);
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://[fd00:ec2::254]/', 'http://100.100.100.200/']) {
      const res = await request(app).post('/webhook-endpoints').set(partner.auth).send({ url, event_types: ['task.created'] });
      expect(res.status, url).toBe(400);
    }
  });

  it('every address class is judged as the cheat sheet says', () => {
    expect(['8.8.8.8', '2606:4700::1111'].map(classifyAddress)).toEqual(['public', 'public']);
    expect(['127.0.0.1', '10.0.0.1', '100.64.1.1', 'fc00::1', '::ffff:192.168.0.1', '::1', '0.0.0.0'].map(classifyAddress).every((v) => v === 'private')).toBe(true);
    expect(['169.254.169.254', 'fe80::1', 'fd00:ec2::254', '100.100.100.200', '::ffff:169.254.169.254'].map(classifyAddress).every((v) => v === 'metadata')).toBe(true);
  });

  it('a URL that became private after it was saved (DNS rebinding) is refused at delivery, on the address connected to, and nothing connects', async () => {
    const { app, services } = appOn(database.db, {});
    let connections = 0;
    const listener = createServer(() => connections++);
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const { port } = listener.address() as AddressInfo;
    try {
      // Saved when it was public; now the name (or the literal) leads to loopback.
      const keys = keyring(testConfig().sealingKeys!);
      const saved = [`https://localhost:${port}/hooks`, `https://127.0.0.1:${port}/hooks`, `https://[::ffff:127.0.0.1]:${port}/hooks`].map((url) => ({ id: randomUUID(), url }));
      await database.db
        .insertInto('webhook_endpoints')
        .values(saved.map(({ id, url }) => ({
          id, url, event_types: ['task.created'], created_by_user_id: partner.id, created_at: new Date(), updated_at: new Date(),
          ...((sealed) => ({ secret_sealed: sealed.sealed, secret_key_id: sealed.keyId }))(sealUnderCurrent(keys, id, newSigningSecret())),
        })))
        .execute();
      await request(app).post('/tasks').set(partner.auth).send({ title: 'Rebound' }).expect(201);
      await deliverDue(services.deliveries, database.db);
      const rows = await database.db.selectFrom('webhook_deliveries').select(['last_error', 'status']).where('endpoint_id', 'in', saved.map((s) => s.id)).execute();
      expect(rows).toHaveLength(3);
      expect(rows.every((r) => r.last_error === 'address_refused' && r.status === 'pending')).toBe(true);
      expect(connections).toBe(0);
      await database.db.deleteFrom('webhook_endpoints').where('id', 'in', saved.map((s) => s.id)).execute();
    } finally {
      listener.close();
    }
  });
});

describe('the worker hears every wake', () => {
  // A NOTIFY that came while the worker was claiming (not waiting) was dropped: an event committed
  // then waited for the next poll (1 s by default, here 10 minutes, so waiting for it shows).
  it('an event whose NOTIFY arrives while the worker is busy relaying is delivered without waiting for the poll (woken while busy)', { timeout: budget({ passwordHash: 1 }) + 60_000 }, async () => {
    await database.db.updateTable('webhook_endpoints').set({ enabled: false }).execute(); // earlier tests' endpoints stay out of the claims
    const { app, services } = appOn(database.db, { ...PRIVATE_OK, WEBHOOKS_POLL_INTERVAL_MS: '600000' });
    const user = await createUser(database.db, { permissions: ['tasks.read', 'tasks.create', 'tasks.delete', 'webhooks.manage'] });
    const auth = { authorization: testBearer(user.id) };
    const task = (await request(app).post('/tasks').set(auth).send({ title: 'To be deleted' }).expect(201)).body;
    const receiver = await startReceiver();
    const post = (eventTypes: string[]) => request(app).post('/webhook-endpoints').set(auth).send({ url: receiver.url, event_types: eventTypes }).expect(201);
    const parked = (await post(['task.deleted'])).body.webhook_endpoint.id as string;
    await post(['task.created']);
    await deliverDue(services.deliveries, database.db); // the relay moves past every earlier event
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    const pool = testPool({ connectionString: database.url, max: 1 });
    const worker = services.deliveries;
    try {
      // The worker's next relay makes a delivery to `parked`, whose key check then waits for this lock.
      await locker.query('begin');
      await locker.query('lock table webhook_endpoints in exclusive mode');
      await request(app).delete(`/tasks/${task.id}`).set(auth).expect(204);
      worker.start(database.url);
      // Read outside the locking transaction: inside one, pg_stat_activity keeps the first answer.
      const waiting = async (query: string) => Number((await pool.query(query)).rows[0].n);
      await expect.poll(() => waiting(`select count(*) as n from pg_stat_activity where application_name = 'backoffice-api-webhooks' and query ilike 'listen%'`), { timeout: 30_000, message: 'the worker listens' }).toBe(1);
      await expect.poll(() => waiting(`select count(*) as n from pg_stat_activity where wait_event_type = 'Lock' and query like '%event_relay%'`), { timeout: 30_000, message: 'the relay waits for the lock' }).toBe(1);
      // While it waits: a change whose NOTIFY reaches a busy worker.
      await request(app).post('/tasks').set(auth).send({ title: 'Heard while busy' }).expect(201);
      // The parked relay then ends with nothing to claim (its endpoint disabled meanwhile).
      await locker.query('update webhook_endpoints set enabled = false where id = $1', [parked]);
      await locker.query('commit');
      await expect.poll(() => receiver.received.map((r) => (JSON.parse(r.body) as { data: { title: string } }).data.title), { timeout: 60_000 }).toEqual(['Heard while busy']);
    } finally {
      await locker.end();
      await pool.end();
      await worker.stop();
      await receiver.close();
    }
  });
});
