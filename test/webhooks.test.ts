// Webhooks and the event feed on real PostgreSQL, with real receivers on loopback that
// verify every request with the `standardwebhooks` library, as a partner's receiver would.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { authenticatorsWithTestBearer, testBearer } from './support/access-fixtures.js';
import { createUser } from './support/sessions.js';
import { startReceiver, type Received } from './support/webhook-receiver.js';
import { deliverDue as deliverEventsDue } from './support/deliveries.js';
import { ManualClock } from '../src/clock.js';
import { budget } from './support/budgets.js';
import { recordAuditEvent } from '../src/audit/recorder.js';

type App = ReturnType<typeof createTestApp>['app'];
type Credential = Record<string, string>;

const ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_TIMEOUT_MS: '1500' };

let database: TestDatabase;
let app: App;
let services: ReturnType<typeof createTestApp>['services'];
let logs: ReturnType<typeof createTestApp>['logs'];
let clock: ManualClock;
/** A person holding every permission of tasks, and webhooks.manage and events.read. */
let partner: { id: string; auth: Credential };

async function person(permissions: string[]) {
  const user = await createUser(database.db, { permissions });
  return { id: user.id, auth: { authorization: testBearer(user.id) } as Credential };
}

beforeAll(async () => {
  database = await createTestDatabase();
  clock = new ManualClock(new Date());
  const { deps } = createTestApp(database.db, { clock, env: ENV });
  ({ app, services, logs } = createTestApp(database.db, { clock, env: ENV, authenticators: authenticatorsWithTestBearer(deps) }));
  partner = await person(['tasks.list', 'tasks.read', 'tasks.create', 'tasks.update', 'tasks.delete', 'webhooks.manage', 'events.read']);
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await services.deliveries.stop();
  await database.destroy();
});

async function send(method: 'get' | 'post' | 'patch' | 'delete', path: string, credential: Credential, body?: object) {
  let req = request(app)[method](path).set(credential);
  if (body !== undefined) req = req.send(body);
  const res = await req;
  if (res.status >= 500) console.error(logs.text().split('\n').filter((l) => l.includes('"level":50')).slice(-3).join('\n'));
  expectContractResponse(res, method, path);
  return res;
}

async function subscribe(url: string, eventTypes: string[], credential: Credential = partner.auth, extra: object = {}) {
  // An endpoint receives the events that occurred at or after its creation. The clock is frozen
  // between tests: a millisecond later at least, so that the events of earlier tests, which the relay
  // may fan out only now (held back behind another test file's transaction), are not this endpoint's.
  // And never behind the wall clock, which standardwebhooks checks signatures against (5 minutes).
  clock.set(new Date(Math.max(Date.now(), clock.now().getTime() + 1)));
  const res = await send('post', '/webhook-endpoints', credential, { url, event_types: eventTypes, ...extra });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.webhook_endpoint.id as string, secret: res.body.secret as string };
}

/** What a receiver heard, for a failure's message: each request's path, webhook-id and the start of its body. */
const heard = (receiver: { received: Received[] }) =>
  `the receiver heard ${receiver.received.length}: ${JSON.stringify(receiver.received.map((r) => [r.headers['webhook-id'], r.body.slice(0, 120)]))}`;

/** Fans out every event written so far, runs what is due now and waits until every attempt has been recorded. */
const deliverDue = () => deliverEventsDue(services.deliveries, database.db);

/** The event a receiver got, verified by the library (throws on a bad signature). */
function verified(secret: string, got: Received) {
  return new Webhook(secret).verify(got.body, {
    'webhook-id': got.headers['webhook-id'] as string,
    'webhook-timestamp': got.headers['webhook-timestamp'] as string,
    'webhook-signature': got.headers['webhook-signature'] as string,
  }) as Record<string, unknown>;
}

const deliveriesOf = (endpointId: string) => database.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId).execute();

describe('a change reaches the receiver', () => {
  it('a task changed reaches a receiver subscribed to task.updated once, signed, in the shape of GET /tasks/{id}, and the same event is in GET /events', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.updated']);
    expect(endpoint.secret).toMatch(/^whsec_/);
    const task = (await send('post', '/tasks', partner.auth, { title: 'Call the Lyon office' })).body;
    const changed = await send('patch', `/tasks/${task.id}`, partner.auth, { status: 'done' });
    await deliverDue();
    await deliverDue();
    expect(receiver.received).toHaveLength(1); // task.created was not asked for
    const event = verified(endpoint.secret, receiver.received[0]!);
    expect(event).toMatchObject({ type: 'task.updated', changed_fields: expect.arrayContaining(['status', 'completed_at']), data: changed.body });
    expect(receiver.received[0]!.headers['webhook-id']).toBe(event.id);

    const feed = await send('get', '/events?types=task.updated', partner.auth);
    expect(feed.status).toBe(200);
    expect(feed.body.data).toContainEqual(event);
    expect((await deliveriesOf(endpoint.id))[0]).toMatchObject({ status: 'succeeded', attempts: 1, last_status_code: 200, last_response: 'ok' });
    await receiver.close();
  });

  it('a body changed on the way fails the library\'s check', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    await send('post', '/tasks', partner.auth, { title: 'Tampered with' });
    await deliverDue();
    const got = receiver.received[0]!;
    expect(() => verified(endpoint.secret, got)).not.toThrow();
    expect(() => verified(endpoint.secret, { ...got, body: got.body.replace('Tampered with', 'Tampered with!') })).toThrow();
    await receiver.close();
  });

  it('a receiver in camelCase gets the event in camelCase', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created'], partner.auth, { key_style: 'camel' });
    await send('post', '/tasks', partner.auth, { title: 'Camel' });
    await deliverDue();
    const event = verified(endpoint.secret, receiver.received[0]!);
    expect(event).toHaveProperty('occurredAt');
    expect(event.data).toHaveProperty('createdBy');
    await receiver.close();
  });
});

describe('key styles', () => {
  it('changed_fields name the fields of data in the key style data is in, for a camelCase receiver and a dash poller', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.updated'], partner.auth, { key_style: 'camel' });
    const task = await send('post', '/tasks', partner.auth, { title: 'Styled fields' });
    const patched = await send('patch', `/tasks/${task.body.id as string}`, partner.auth, { due_at: '2031-01-02T10:00:00.000Z' });
    expect(patched.status, patched.text).toBe(200);
    await deliverDue();
    const event = verified(endpoint.secret, receiver.received[0]!) as { id: string; changedFields: string[]; data: Record<string, unknown> };
    expect(event.changedFields).toEqual(['dueAt']);
    expect(event.data).toHaveProperty('dueAt');
    const feed = await request(app).get('/events?types=task.updated').set(partner.auth).set('x-api-inflection', 'dash');
    const polled = (feed.body.data as { id: string; 'changed-fields': string[] }[]).find((e) => e.id === event.id);
    expect(polled?.['changed-fields']).toEqual(['due-at']);
    await receiver.close();
  });
});

describe('retries', () => {
  it('a receiver failing three times then answering 200 gets the event at the fourth attempt, with the same webhook-id', async () => {
    const receiver = await startReceiver([500, 503, 500]);
    const endpoint = await subscribe(receiver.url, ['task.created']);
    await send('post', '/tasks', partner.auth, { title: 'Retried' });
    for (let attempt = 1; attempt <= 4; attempt++) {
      const sentAt = clock.now().getTime();
      await deliverDue();
      expect(receiver.received).toHaveLength(attempt);
      if (attempt === 4) break;
      // The next attempt is due after the schedule's step, ±20 % (5 s, 1 min, 5 min): time passes to it.
      const [delivery] = await deliveriesOf(endpoint.id);
      const wait = delivery!.next_attempt_at!.getTime() - sentAt;
      const step = [5, 60, 300][attempt - 1]! * 1000;
      expect(wait).toBeGreaterThanOrEqual(step * 0.8);
      expect(wait).toBeLessThanOrEqual(step * 1.2);
      await database.db.updateTable('webhook_deliveries').set({ next_attempt_at: clock.now() }).where('id', '=', delivery!.id).execute();
    }
    const ids = receiver.received.map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(1);
    expect(verified(endpoint.secret, receiver.received[3]!)).toMatchObject({ id: ids[0], type: 'task.created' });
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 4 });
    await receiver.close();
  });

  it('the first retry is due within 10 seconds', async () => {
    const receiver = await startReceiver([500]);
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const before = clock.now().getTime();
    await send('post', '/tasks', partner.auth, { title: 'Soon again' });
    await deliverDue();
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery!.status).toBe('pending');
    expect(delivery!.next_attempt_at!.getTime() - before).toBeLessThanOrEqual(10_000);
    await receiver.close();
  });

  it('a receiver that hangs is timed out and the delivery is retried later', async () => {
    const receiver = await startReceiver(['hang']);
    const endpoint = await subscribe(receiver.url, ['task.created']);
    await send('post', '/tasks', partner.auth, { title: 'Hanging' });
    await deliverDue();
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery, heard(receiver)).toMatchObject({ status: 'pending', attempts: 1, last_error: 'timeout', last_status_code: null });
    await receiver.close();
  });

  it('a failing receiver\'s answer is kept short', async () => {
    const receiver = await startReceiver([500]);
    const endpoint = await subscribe(receiver.url, ['task.created']);
    await send('post', '/tasks', partner.auth, { title: 'Long answer' });
    await deliverDue();
    const [delivery] = await deliveriesOf(endpoint.id);
    expect(delivery!.last_response!.length).toBeLessThanOrEqual(256);
    expect(delivery!.last_error).toBe('status_500');
    await receiver.close();
  });
});

describe('fan-out: a change writes its event, the workers make the deliveries', () => {
  /** A promise and the function that settles it: one step of two transactions interleaved by hand. */
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };
  /** A task's `task_created` event written on `trx` as a change would, titled `title` (in the event only). */
  const recordTaskEvent = (trx: Parameters<typeof recordAuditEvent>[0], task: { id: string }, title: string) =>
    recordAuditEvent(trx, {
      type: 'task_created',
      at: clock.now(),
      context: { actor: { type: 'user', userId: partner.id, sessionId: null }, requestId: null, ip: null, userAgent: null },
      target: { type: 'task', id: task.id, label: title },
      publish: { data: { ...task, title } },
    });
  const eventOf = async (taskId: string) =>
    (await database.db.selectFrom('events').select('id').where('payload', '@>', JSON.stringify({ data: { id: taskId } }) as never).executeTakeFirstOrThrow()).id;

  it('a create writes no delivery in its own transaction, however many endpoints listen; the worker makes one per endpoint', async () => {
    const receiver = await startReceiver();
    const endpoints = [await subscribe(receiver.url, ['task.created']), await subscribe(receiver.url, ['task.created'])];
    const task = (await send('post', '/tasks', partner.auth, { title: 'Fanned out later' })).body;
    const event = await eventOf(task.id);
    const ofEvent = () => database.db.selectFrom('webhook_deliveries').select('endpoint_id').where('event_id', '=', event).where('endpoint_id', 'in', endpoints.map((e) => e.id)).execute();
    expect(await ofEvent()).toEqual([]);
    await deliverDue();
    expect((await ofEvent()).map((d) => d.endpoint_id).sort()).toEqual(endpoints.map((e) => e.id).sort());
    await deliverDue();
    expect(await ofEvent()).toHaveLength(2); // relayed once
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === event)).toHaveLength(2);
    await receiver.close();
  });

  it('an endpoint created after a change does not receive it, even when the relay comes later', async () => {
    const receiver = await startReceiver();
    const task = (await send('post', '/tasks', partner.auth, { title: 'Before the endpoint' })).body;
    const event = await eventOf(task.id);
    clock.advance(1000);
    const late = await subscribe(receiver.url, ['task.created']);
    await deliverDue();
    expect(await database.db.selectFrom('webhook_deliveries').select('id').where('event_id', '=', event).where('endpoint_id', '=', late.id).execute()).toEqual([]);
    expect(receiver.received.filter((r) => r.headers['webhook-id'] === event)).toEqual([]);
    await receiver.close();
  });

  it('an event whose delivery a process of the previous release already made (in the change\'s statement) is not delivered twice', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const task = (await send('post', '/tasks', partner.auth, { title: 'Made by the old writer' })).body;
    const event = await eventOf(task.id);
    await database.db.insertInto('webhook_deliveries').values({ endpoint_id: endpoint.id, event_id: event, created_at: clock.now(), next_attempt_at: clock.now() }).execute();
    await deliverDue();
    expect(await deliveriesOf(endpoint.id)).toHaveLength(1);
    expect(receiver.received).toHaveLength(1);
    await receiver.close();
  });

  it('an event of a transaction still open is not stepped over: the relay waits at it, and relays it and the later ones once it commits', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const task = (await send('post', '/tasks', partner.auth, { title: 'The slow change\'s task' })).body;
    await deliverDue();
    const before = receiver.received.length;
    // A change that writes its event (taking a seq) and commits only after a later change was relayed.
    const [written, released] = [gate(), gate()];
    const slow = database.db.transaction().execute(async (trx) => {
      await recordTaskEvent(trx, task, 'Committed late, the slow one');
      written.open();
      await released.opened;
    });
    await written.opened;
    await send('post', '/tasks', partner.auth, { title: 'Committed early' });
    // One round of the worker (deliverDue would wait for the relay to pass the open transaction).
    await services.deliveries.runOnce();
    await services.deliveries.idle();
    const titles = () => receiver.received.slice(before).map((r) => (JSON.parse(r.body) as { data: { title: string } }).data.title);
    try {
      expect(titles()).toEqual([]); // the later event waits too: relaying it would move the relay past the open one
    } finally {
      released.open();
      await slow;
    }
    await deliverDue();
    expect(titles().sort()).toEqual(['Committed early', 'Committed late, the slow one']);
    expect(await deliveriesOf(endpoint.id)).toHaveLength(receiver.received.length);
    await receiver.close();
  });

  it('an event committed late by a transaction that began after another is neither stepped over by the relay nor by the feed (seq out of transaction order)', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const task = (await send('post', '/tasks', partner.auth, { title: 'Out of order' })).body;
    await deliverDue();
    const before = receiver.received.length;
    const record = (trx: Parameters<typeof recordAuditEvent>[0], title: string) => recordTaskEvent(trx, task, title);
    const [aStarted, tWritten, tRelease] = [gate(), gate(), gate()];
    // A takes its transaction id first; T begins after and writes its event (the earlier seq); A
    // then writes its own (the later seq) and commits while T is still open.
    const a = database.db.transaction().execute(async (trx) => {
      await sql`select pg_current_xact_id()`.execute(trx);
      aStarted.open();
      await tWritten.opened;
      await record(trx, 'A, began first');
    });
    await aStarted.opened;
    const t = database.db.transaction().execute(async (trx) => {
      await record(trx, 'T, began after');
      tWritten.open();
      await tRelease.opened;
    });
    await tWritten.opened;
    await a;
    const titles = () => receiver.received.slice(before).map((r) => (JSON.parse(r.body) as { data: { title: string } }).data.title);
    let cursor: string;
    try {
      // Rounds of the worker until A's event is out (an older transaction of another test file's
      // database may hold it back for a moment); T's stays behind while T is open.
      await expect
        .poll(async () => {
          await services.deliveries.runOnce();
          await services.deliveries.idle();
          return titles();
        }, { timeout: 30_000 })
        .toEqual(['A, began first']);
      // The feed to its end: A's event is there, and the cursor is past it.
      const feed = async () => {
        const pages = [await send('get', '/events?types=task.created&limit=100', partner.auth)];
        while (pages.at(-1)!.body.data.length === 100) pages.push(await send('get', `/events?types=task.created&limit=100&after=${pages.at(-1)!.body.next_cursor}`, partner.auth));
        return pages;
      };
      let pages = await feed();
      await expect.poll(async () => (pages = await feed()).flatMap((p) => p.body.data.map((e: { data: { title: string } }) => e.data.title)), { timeout: 30_000 }).toContain('A, began first');
      cursor = pages.at(-1)!.body.next_cursor;
    } finally {
      tRelease.open();
      await t;
    }
    await deliverDue();
    expect(titles().sort()).toEqual(['A, began first', 'T, began after']);
    expect((await deliveriesOf(endpoint.id)).length).toBe(receiver.received.length);
    const next = async () => (await send('get', `/events?types=task.created&after=${cursor}`, partner.auth)).body.data.map((e: { data: { title: string } }) => e.data.title);
    await expect.poll(next, { timeout: 30_000 }).toEqual(['T, began after']); // polled: see 'walks on from its cursor'
    await receiver.close();
  });
});

describe('only what is committed, only to who may read it', () => {
  it('a change rolled back sends nothing and is not in the feed', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const count = async (table: 'events' | 'webhook_deliveries') =>
      (await database.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n;
    const [events, deliveries] = [await count('events'), await count('webhook_deliveries')];
    const task = (await send('post', '/tasks', partner.auth, { title: 'Rolled back' })).body;
    await database.db.deleteFrom('webhook_deliveries').where('endpoint_id', '=', endpoint.id).execute();
    await database.db.deleteFrom('events').where('payload', '@>', JSON.stringify({ data: { id: task.id } }) as never).execute();
    // The change and its audit event, written as the service writes them, then the transaction fails.
    await expect(
      database.db.transaction().execute(async (trx) => {
        await recordAuditEvent(trx, {
          type: 'task_created',
          at: clock.now(),
          context: { actor: { type: 'user', userId: partner.id, sessionId: null }, requestId: null, ip: null, userAgent: null },
          target: { type: 'task', id: task.id, label: 'Rolled back' },
          publish: { data: task },
        });
        expect(await trx.selectFrom('events').select('id').where('payload', '@>', JSON.stringify({ data: { id: task.id } }) as never).execute()).toHaveLength(1);
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');
    await deliverDue();
    expect(receiver.received).toHaveLength(0);
    expect([await count('events'), await count('webhook_deliveries')]).toEqual([events, deliveries]);
    expect((await send('get', '/events?types=task.created', partner.auth)).body.data.map((e: { data: { id: string } }) => e.data.id)).not.toContain(task.id);
    await receiver.close();
  });

  it('an endpoint whose owner lost tasks.read stops receiving task events', async () => {
    const owner = await person(['tasks.read', 'webhooks.manage']);
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created'], owner.auth);
    await send('post', '/tasks', partner.auth, { title: 'Seen' });
    await deliverDue();
    expect(receiver.received).toHaveLength(1);
    await database.db.deleteFrom('role_permissions').where('permission', '=', 'tasks.read').where('role_id', 'in', (eb) => eb.selectFrom('user_roles').select('role_id').where('user_id', '=', owner.id)).execute();
    await send('post', '/tasks', partner.auth, { title: 'Not seen' });
    await deliverDue();
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesOf(endpoint.id)).map((d) => d.status).sort()).toEqual(['skipped', 'succeeded']);
    await receiver.close();
  });

  it("a routine rotation by a colleague who reads more does not widen what the owner's receiver gets (rotation-owner escalation)", async () => {
    const owner = await person(['tasks.read', 'webhooks.manage']);
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created'], owner.auth);
    // The owner loses tasks.read; a colleague who holds it rotates the secret, as the page offers.
    await database.db.deleteFrom('role_permissions').where('permission', '=', 'tasks.read').where('role_id', 'in', (eb) => eb.selectFrom('user_roles').select('role_id').where('user_id', '=', owner.id)).execute();
    expect((await send('post', `/webhook-endpoints/${endpoint.id}/rotate`, partner.auth, { grace_period_seconds: 0 })).status).toBe(200);
    await send('post', '/tasks', partner.auth, { title: 'Not for the old owner' });
    await deliverDue();
    expect(receiver.received).toHaveLength(0);
    expect((await deliveriesOf(endpoint.id)).map((d) => d.status)).toEqual(['skipped']);
    await receiver.close();
  });

  it("a webhook manager who may not read users learns nothing of user events from another endpoint's deliveries (delivery-list leak)", async () => {
    const receiver = await startReceiver();
    const admin = await person(['users.read', 'users.update', 'users.list', 'webhooks.manage', 'tasks.read']);
    const endpoint = await subscribe(receiver.url, ['user.updated', 'task.created'], admin.auth);
    const someone = await createUser(database.db);
    expect((await send('patch', `/users/${someone.id}`, admin.auth, { first_name: 'Renamed' })).status).toBe(200);
    await send('post', '/tasks', partner.auth, { title: 'Seen by both' });
    await deliverDue();
    const types = async (credential: Credential) => (await send('get', `/webhook-endpoints/${endpoint.id}/deliveries`, credential)).body.data.map((d: { event_type: string }) => d.event_type).sort();
    expect(await types(admin.auth)).toEqual(['task.created', 'user.updated']);
    const tasksOnly = await person(['webhooks.manage', 'tasks.read']);
    expect(await types(tasksOnly.auth)).toEqual(['task.created']);
    await receiver.close();
  });

  it('subscribing to what one may not read is refused', async () => {
    const reader = await person(['webhooks.manage', 'tasks.read']);
    const res = await send('post', '/webhook-endpoints', reader.auth, { url: 'http://127.0.0.1:9/hooks', event_types: ['user.updated'] });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'permission_denied', missing_permissions: ['users.read'] });
  });

  it('the feed lists only what the caller may read now', async () => {
    const meetingsOnly = await person(['events.read', 'meetings.read']);
    await send('post', '/tasks', partner.auth, { title: 'Not for meeting people' });
    const res = await send('get', '/events', meetingsOnly.auth);
    expect(res.status).toBe(200);
    expect(res.body.data.filter((e: { type: string }) => e.type.startsWith('task.'))).toEqual([]);
  });

  it('an event never carries a password digest or a second-factor detail', async () => {
    const admin = await person(['users.create', 'users.read', 'users.update', 'events.read']);
    await send('post', '/users', admin.auth, { email: `new-${Date.now()}@example.com`, first_name: 'New', last_name: 'Person', password: 'a long private password 1' });
    const events = await database.db.selectFrom('events').select('payload').where('type', 'like', 'user.%').execute();
    expect(events.length).toBeGreaterThan(0);
    const text = JSON.stringify(events);
    expect(text).not.toMatch(/password|digest|hash|totp|secret/i);
  });
});

describe('security: a signing secret and a delivery reach only who may read what they carry', () => {
  const endpointRow = (id: string) => database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const rotationsAudited = (id: string) =>
    database.db.selectFrom('security_events').select('id').where('type', '=', 'webhook_endpoint_secret_rotated').where('target_id', '=', id).execute();

  it("attack: a webhooks.manage holder who may not read users rotates an administrator's endpoint to take a secret that forges user events to its receiver, and cuts the owner off", async () => {
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminAuth: Credential = { authorization: testBearer(admin.id) };
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['user.updated', 'task.created'], adminAuth);
    const before = await endpointRow(endpoint.id);
    const manager = await person(['webhooks.manage', 'tasks.read']);
    const res = await send('post', `/webhook-endpoints/${endpoint.id}/rotate`, manager.auth, { grace_period_seconds: 0 });
    expect(res.status, res.text).toBe(403);
    // What the administrator's receiver hears or may hear: every event the administrator reads.
    expect(res.body.code).toBe('permission_denied');
    expect([...res.body.missing_permissions].sort()).toEqual(['api_keys.manage', 'meetings.read', 'users.read']);
    expect(res.text).not.toContain('whsec_');
    // Nothing changed: the same secret, no rotation audited, and the owner's receiver still verifies with its secret alone.
    expect(await endpointRow(endpoint.id)).toEqual(before);
    expect(await rotationsAudited(endpoint.id)).toEqual([]);
    await send('post', '/tasks', partner.auth, { title: 'Still signed by the owner' });
    await deliverDue();
    const got = receiver.received.find((r) => r.body.includes('Still signed by the owner'))!;
    expect(got, `${heard(receiver)}; deliveries: ${JSON.stringify(await deliveriesOf(endpoint.id))}`).toBeDefined();
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verified(endpoint.secret, got)).toMatchObject({ type: 'task.created' });
    // A colleague who may read every type the owner may read may rotate it.
    const colleague = await person(['webhooks.manage', 'tasks.read', 'users.read', 'meetings.read', 'api_keys.manage']);
    expect((await send('post', `/webhook-endpoints/${endpoint.id}/rotate`, colleague.auth, { grace_period_seconds: 0 })).status).toBe(200);
    expect(await rotationsAudited(endpoint.id)).toHaveLength(1);
    await receiver.close();
  });

  it("attack: a webhooks.manage holder narrows an administrator's endpoint to the types it may read, then rotates it to take a secret its receiver trusts for every type", async () => {
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminAuth: Credential = { authorization: testBearer(admin.id) };
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['user.updated', 'task.created'], adminAuth);
    const manager = await person(['webhooks.manage', 'tasks.read']);
    // Removing types only takes away, so it is allowed; the secret is still not the manager's to take.
    expect((await send('patch', `/webhook-endpoints/${endpoint.id}`, manager.auth, { event_types: ['task.created'] })).status).toBe(200);
    const before = await endpointRow(endpoint.id);
    const res = await send('post', `/webhook-endpoints/${endpoint.id}/rotate`, manager.auth, { grace_period_seconds: 0 });
    expect(res.status, res.text).toBe(403);
    expect(res.body.missing_permissions).toContain('users.read');
    expect(res.text).not.toContain('whsec_');
    expect(await endpointRow(endpoint.id)).toEqual(before);
    expect(await rotationsAudited(endpoint.id)).toEqual([]);
    await receiver.close();
  });

  it('attack: a webhooks.manage and events.read holder who may not read tasks replays a delivery it cannot list, to learn a task event and send it again', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    await send('post', '/tasks', partner.auth, { title: 'Not for the replayer' });
    await deliverDue();
    const deliveries = await deliveriesOf(endpoint.id);
    const outsider = await person(['webhooks.manage', 'events.read']);
    expect((await send('get', `/webhook-endpoints/${endpoint.id}/deliveries`, outsider.auth)).body.data).toEqual([]);
    const replay = (deliveryId: string, credential: Credential) => send('post', `/webhook-endpoints/${endpoint.id}/deliveries/${deliveryId}/replay`, credential);
    const replayed = await replay(deliveries[0]!.id, outsider.auth);
    expect(replayed.status, replayed.text).toBe(404);
    // Exactly as a delivery that does not exist: no hint that this one does.
    const unknown = await replay(randomUUID(), outsider.auth);
    const withoutRequestId = ({ request_id: _, ...rest }: Record<string, unknown>) => rest;
    expect(withoutRequestId(replayed.body)).toEqual(withoutRequestId(unknown.body));
    expect(await deliveriesOf(endpoint.id)).toHaveLength(deliveries.length);
    // Whoever may read tasks still replays it.
    expect((await replay(deliveries[0]!.id, partner.auth)).status).toBe(202);
    await receiver.close();
  });
});

describe('the feed', () => {
  it('walks on from its cursor and refuses an altered one', async () => {
    // To the end of the feed first (the tests above wrote more than a page).
    let first = await send('get', '/events?types=task.created&limit=100', partner.auth);
    while (first.body.data.length === 100) first = await send('get', `/events?types=task.created&limit=100&after=${first.body.next_cursor}`, partner.auth);
    await send('post', '/tasks', partner.auth, { title: 'After the cursor' });
    // Polled: the feed holds an event back while an older transaction runs anywhere in the cluster
    // (the other test files' databases share it).
    const next = async () => (await send('get', `/events?types=task.created&after=${first.body.next_cursor}`, partner.auth)).body.data.map((e: { data: { title: string } }) => e.data.title);
    await expect.poll(next, { timeout: 30_000 }).toEqual(['After the cursor']);
    const other = await send('get', `/events?types=task.updated&after=${first.body.next_cursor}`, partner.auth);
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('invalid_cursor');
  });
});

describe('endpoints', () => {
  it('rotating the secret signs with both secrets during the grace period', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.created']);
    const rotated = await send('post', `/webhook-endpoints/${endpoint.id}/rotate`, partner.auth, { grace_period_seconds: 3600 });
    expect(rotated.status).toBe(200);
    await send('post', '/tasks', partner.auth, { title: 'Both' });
    await deliverDue();
    const got = receiver.received[0]!;
    expect(got, `${heard(receiver)}; deliveries: ${JSON.stringify(await deliveriesOf(endpoint.id))}`).toBeDefined();
    expect((got.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(() => verified(endpoint.secret, got)).not.toThrow();
    expect(() => verified(rotated.body.secret, got)).not.toThrow();
    await receiver.close();
  });

  it('a test event, the deliveries, and a replay with the same webhook-id', async () => {
    const receiver = await startReceiver();
    const endpoint = await subscribe(receiver.url, ['task.deleted']);
    const tested = await send('post', `/webhook-endpoints/${endpoint.id}/test`, partner.auth);
    expect(tested.status).toBe(202);
    await deliverDue();
    expect(verified(endpoint.secret, receiver.received[0]!)).toMatchObject({ type: 'webhook_endpoint.test', data: { webhook_endpoint_id: endpoint.id } });
    const list = await send('get', `/webhook-endpoints/${endpoint.id}/deliveries`, partner.auth);
    expect(list.body.data[0]).toMatchObject({ id: tested.body.id, status: 'succeeded', last_status_code: 200 });
    const replayed = await send('post', `/webhook-endpoints/${endpoint.id}/deliveries/${tested.body.id}/replay`, partner.auth);
    expect(replayed.status).toBe(202);
    await deliverDue();
    expect(receiver.received[1]!.headers['webhook-id']).toBe(receiver.received[0]!.headers['webhook-id']);
    await receiver.close();
    // A cursor not issued for this list is refused, naming the parameter the list takes.
    const forged = await send('get', `/webhook-endpoints/${endpoint.id}/deliveries?cursor=not-a-cursor`, partner.auth);
    expect(forged.status).toBe(400);
    expect(forged.body).toMatchObject({ code: 'invalid_cursor', errors: [{ location: 'request/query/cursor' }] });
  });

  it('list, read, change, delete, and the French path', async () => {
    const endpoint = await subscribe('http://127.0.0.1:9/hooks', ['task.created']);
    expect((await send('get', '/webhook-endpoints', partner.auth)).body.data.map((e: { id: string }) => e.id)).toContain(endpoint.id);
    expect((await send('get', `/points-de-terminaison-webhook/${endpoint.id}`, partner.auth)).body).toMatchObject({ id: endpoint.id, enabled: true });
    expect((await send('patch', `/webhook-endpoints/${endpoint.id}`, partner.auth, { enabled: false })).body.enabled).toBe(false);
    expect((await send('delete', `/webhook-endpoints/${endpoint.id}`, partner.auth)).status).toBe(204);
    expect((await send('get', `/webhook-endpoints/${endpoint.id}`, partner.auth)).status).toBe(404);
    expect((await send('get', '/webhook-endpoints/not-an-id', partner.auth)).status).toBe(404);
  });
});

describe('entity tags (docs/SAFE-WRITES.md)', () => {
  /** A GET's tag, a PATCH with it, and what a stale one gets. */
  const tagOf = async (id: string) => (await send('get', `/webhook-endpoints/${id}`, partner.auth)).headers.etag as string;
  const patchWith = (id: string, tag: string, body: object) => request(app).patch(`/webhook-endpoints/${id}`).set(partner.auth).set('if-match', tag).send(body);

  it('create, rotate and change answer the tag a GET answers, and a stale If-Match on PATCH or DELETE changes nothing', async () => {
    const made = await send('post', '/webhook-endpoints', partner.auth, { url: 'http://127.0.0.1:9/hooks', event_types: ['task.created'] });
    const id = made.body.webhook_endpoint.id as string;
    expect(made.headers.etag).toBe(await tagOf(id));
    const changed = await patchWith(id, made.headers.etag as string, { description: 'Mirror' });
    expect(changed.status, changed.text).toBe(200);
    expect(changed.headers.etag).not.toBe(made.headers.etag);
    expect(changed.headers.etag).toBe(await tagOf(id));
    const stale = await patchWith(id, made.headers.etag as string, { url: 'http://127.0.0.1:10/elsewhere' });
    expect(stale.status).toBe(412);
    expect(stale.body.code).toBe('precondition_failed');
    expectContractResponse(stale, 'patch', `/webhook-endpoints/${id}`);
    const staleDelete = await request(app).delete(`/webhook-endpoints/${id}`).set(partner.auth).set('if-match', made.headers.etag as string);
    expect(staleDelete.status).toBe(412);
    expect((await send('get', `/webhook-endpoints/${id}`, partner.auth)).body).toMatchObject({ url: 'http://127.0.0.1:9/hooks', description: 'Mirror' });
    const rotated = await send('post', `/webhook-endpoints/${id}/rotate`, partner.auth, { grace_period_seconds: 60 });
    expect(rotated.headers.etag).toBe(await tagOf(id));
    expect(rotated.headers.etag).not.toBe(changed.headers.etag);
    expect((await request(app).delete(`/webhook-endpoints/${id}`).set(partner.auth).set('if-match', rotated.headers.etag as string)).status).toBe(204);
  });

  it('the tag changes when the rotated-out secret stops signing, with no write: a copy read during the grace period is stale after it', async () => {
    const { id } = await subscribe('http://127.0.0.1:9/hooks', ['task.created']);
    const rotated = await send('post', `/webhook-endpoints/${id}/rotate`, partner.auth, { grace_period_seconds: 60 });
    const during = await send('get', `/webhook-endpoints/${id}`, partner.auth);
    expect(during.body.secret_rotation_ends_at).not.toBeNull();
    expect(during.headers.etag).toBe(rotated.headers.etag);
    clock.advance(61_000);
    const after = await request(app).get(`/webhook-endpoints/${id}`).set(partner.auth).set('if-none-match', during.headers.etag as string);
    expect(after.status).toBe(200);
    expect(after.body.secret_rotation_ends_at).toBeNull();
    expect((await patchWith(id, during.headers.etag as string, { description: 'Seen during the grace period' })).status).toBe(412);
    expect((await request(app).get(`/webhook-endpoints/${id}`).set(partner.auth).set('if-none-match', after.headers.etag as string)).status).toBe(304);
  });

  it('the tag changes when the service disables a failing endpoint, so a form read before cannot enable it back unknowingly', async () => {
    const { id } = await subscribe('http://127.0.0.1:9/hooks', ['task.created']);
    const tag = await tagOf(id);
    // As the delivery worker does after days of failures (src/webhooks/worker.ts).
    await database.db.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: 'failing' }).where('id', '=', id).execute();
    expect((await patchWith(id, tag, { description: 'Edited from an old copy' })).status).toBe(412);
    expect(await tagOf(id)).not.toBe(tag);
  });

  it("the tag changes when its owner's name changes (created_by shows it)", async () => {
    const { id } = await subscribe('http://127.0.0.1:9/hooks', ['task.created']);
    const tag = await tagOf(id);
    await database.db.updateTable('users').set({ first_name: 'Renamed' }).where('id', '=', partner.id).execute();
    const read = await send('get', `/webhook-endpoints/${id}`, partner.auth);
    expect(read.body.created_by.label).toMatch(/^Renamed /);
    expect(read.headers.etag).not.toBe(tag);
  });
});
