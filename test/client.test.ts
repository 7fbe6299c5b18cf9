// The TypeScript client package (clients/typescript/, docs/PARTNERS.md) against the real service on
// PostgreSQL, listening on a real socket: what the client promises partners. The package itself, packed and
// installed, is test/client-package.test.ts; against the mock, test/client-mock.test.ts.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';
import { startReceiver } from './support/webhook-receiver.js';
import { deliverDue } from './support/deliveries.js';
import { budget } from './support/budgets.js';
import { ManualClock, systemClock } from '../src/clock.js';
import { uniqueNameKey } from '../src/text/normalize.js';
import {
  createClient,
  ApiError,
  NetworkError,
  NotFoundError,
  PreconditionFailedError,
  RateLimitedError,
  UnauthorizedError,
  WebhookVerificationError,
  signedHeaders,
  verifyWebhook,
  type Tokens,
} from '../clients/typescript/src/index.js';

const ENV = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true', WEBHOOKS_TIMEOUT_MS: '2000' };
const EVERYTHING = ['users.list', 'users.read', 'tasks.list', 'tasks.read', 'tasks.create', 'tasks.update', 'tasks.delete', 'webhooks.manage', 'events.read'];

let database: TestDatabase;
let services: ReturnType<typeof createTestApp>['services'];
let server: HttpServer;
let baseUrl: string;
let apiKey: string;

function listen(app: ReturnType<typeof createTestApp>['app']): Promise<HttpServer> {
  return new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
}
const urlOf = (s: HttpServer | Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
const close = (s: HttpServer | Server) => new Promise<void>((resolve) => s.close(() => resolve()));

beforeAll(async () => {
  database = await createTestDatabase();
  const made = createTestApp(database.db, { clock: systemClock, env: ENV });
  services = made.services;
  server = await listen(made.app);
  baseUrl = urlOf(server);
  apiKey = (await makeApiKey(database.db, EVERYTHING)).secret;
});
afterAll(async () => {
  server?.closeAllConnections();
  if (server) await close(server);
  await services?.deliveries.stop();
  await database?.destroy();
});

/** Every attempt the client makes: method, path and status (or 'network'). */
function recording() {
  const attempts: { method: string; path: string; status: number | 'network'; headers: Headers }[] = [];
  const fetch = async (req: Request) => {
    const path = new URL(req.url).pathname;
    try {
      const res = await globalThis.fetch(req);
      attempts.push({ method: req.method, path, status: res.status, headers: req.headers });
      return res;
    } catch (err) {
      attempts.push({ method: req.method, path, status: 'network', headers: req.headers });
      throw err;
    }
  };
  return { attempts, fetch };
}

/**
 * A TCP proxy in front of the service that cuts the client's connection when the answer to the
 * request starting with `request` (its method and path, e.g. "PATCH /tasks/") comes back: the
 * service did the work, the client never hears of it (a dropped connection). Any other connection
 * passes through and is not counted: the proxy's port may have served an earlier server, whose
 * callers (a retried webhook, a kept-alive connection) can still knock on it.
 */
async function droppingProxy(upstream: string, request: string, drops = 1) {
  const { port } = new URL(upstream);
  let dropped = 0;
  const sockets = new Set<Socket>();
  const proxy = createServer((client) => {
    sockets.add(client);
    const service = connect(Number(port), '127.0.0.1');
    sockets.add(service);
    let drop: boolean | undefined; // decided on the request's first bytes
    client.on('data', (chunk: Buffer) => {
      if (drop === undefined) {
        drop = dropped < drops && chunk.toString('latin1').startsWith(request);
        if (drop) dropped++;
      }
      service.write(chunk);
    });
    client.on('end', () => service.end());
    service.on('data', (chunk) => {
      if (drop) {
        client.destroy();
        service.destroy();
      } else client.write(chunk);
    });
    service.on('end', () => client.end());
    client.on('error', () => service.destroy());
    service.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: urlOf(proxy),
    dropped: () => dropped,
    close: async () => {
      for (const s of sockets) s.destroy();
      await close(proxy);
    },
  };
}

const tasksTitled = async (title: string) => Number((await sql<{ n: string }>`select count(*) as n from tasks where title = ${title}`.execute(database.db)).rows[0]!.n);

describe('creates are made once', () => {
  it('a create whose answer is lost with the connection is retried with the same Idempotency-Key and makes one task', async () => {
    const proxy = await droppingProxy(baseUrl, 'POST /tasks ');
    const { attempts, fetch } = recording();
    try {
      const bo = createClient({ baseUrl: proxy.url, apiKey, fetch });
      const title = `dropped ${randomUUID()}`;
      const { data, response } = await bo.POST('/tasks', { body: { title } });
      expect(proxy.dropped()).toBe(1);
      expect(data!.title).toBe(title);
      expect(response.status).toBe(201);
      expect(response.headers.get('idempotent-replayed')).toBe('true'); // the first attempt's answer, replayed
      expect(await tasksTitled(title)).toBe(1);
      const posts = attempts.filter((a) => a.method === 'POST');
      expect(posts.map((a) => a.status)).toEqual(['network', 201]);
      const keys = posts.map((a) => a.headers.get('idempotency-key'));
      expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect(keys[1]).toBe(keys[0]);
      // Its ETag is remembered for the next change of the task (Location).
      expect(bo.etagOf(`/tasks/${data!.id}`)).toBe(response.headers.get('etag'));
    } finally {
      await proxy.close();
    }
  });

  it('two creates get two keys, and a key given by the caller is used as it is', async () => {
    const { attempts, fetch } = recording();
    const bo = createClient({ baseUrl, apiKey, fetch });
    const title = `keys ${randomUUID()}`;
    await bo.POST('/tasks', { body: { title } });
    await bo.POST('/tasks', { body: { title } });
    const mine = randomUUID();
    const first = await bo.POST('/tasks', { body: { title: `${title} mine` }, params: { header: { 'Idempotency-Key': mine } } });
    const again = await bo.POST('/tasks', { body: { title: `${title} mine` }, params: { header: { 'Idempotency-Key': mine } } });
    expect(again.response.headers.get('idempotent-replayed')).toBe('true');
    expect(again.data!.id).toBe(first.data!.id);
    const keys = attempts.filter((a) => a.method === 'POST').map((a) => a.headers.get('idempotency-key'));
    expect(new Set(keys.slice(0, 2)).size).toBe(2);
    expect(keys.slice(2)).toEqual([mine, mine]);
    expect(await tasksTitled(title)).toBe(2);
    expect(await tasksTitled(`${title} mine`)).toBe(1);
  });

  it('a change is not retried after a lost answer (it could have been made): NetworkError', async () => {
    const bo = createClient({ baseUrl, apiKey });
    const { data: task } = await bo.POST('/tasks', { body: { title: `no retry ${randomUUID()}` } });
    const proxy = await droppingProxy(baseUrl, 'PATCH /tasks/');
    try {
      const cut = createClient({ baseUrl: proxy.url, apiKey });
      await expect(cut.PATCH('/tasks/{id}', { params: { path: { id: task!.id } }, body: { status: 'done' } })).rejects.toBeInstanceOf(NetworkError);
      expect(proxy.dropped()).toBe(1);
    } finally {
      await proxy.close();
    }
  });
});

describe('rate limits', () => {
  it('a 429 is waited out (Retry-After) and the calls go through; a wait beyond maxDelayMs is thrown as RateLimitedError', async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    await database.db.updateTable('api_keys').set({ rate_limit_requests: 2, rate_limit_per_seconds: 2 }).where('id', '=', key.id).execute();
    const { attempts, fetch } = recording();
    const bo = createClient({ baseUrl, apiKey: key.secret, fetch });
    // At once: five calls sent one by one on a slow machine could spread over windows and meet no 429.
    const answers = await Promise.all(Array.from({ length: 5 }, () => bo.GET('/users', { params: { query: { limit: 1 } } })));
    for (const { data } of answers) expect(Array.isArray(data!.data)).toBe(true);
    const refused = attempts.filter((a) => a.status === 429).length;
    expect(refused).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.status === 200)).toHaveLength(5);

    const slow = await makeApiKey(database.db, ['users.list']);
    await database.db.updateTable('api_keys').set({ rate_limit_requests: 1, rate_limit_per_seconds: 86_400 }).where('id', '=', slow.id).execute();
    const impatient = createClient({ baseUrl, apiKey: slow.secret, retry: { maxDelayMs: 1000 } });
    await impatient.GET('/users', { params: { query: { limit: 1 } } });
    const error = await impatient.GET('/users', { params: { query: { limit: 1 } } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).code).toBe('rate_limited');
    expect((error as RateLimitedError).retryAfterSeconds).toBeGreaterThan(1);
    expect((error as RateLimitedError).requestId).toBe((error as RateLimitedError).headers.get('x-request-id'));
  }, 30_000);
});

describe('updates send the ETag they read', () => {
  it('a change made by someone else since the read is a PreconditionFailedError, nothing is written; read again, the change goes through', async () => {
    const bo = createClient({ baseUrl, apiKey });
    const other = createClient({ baseUrl, apiKey, style: 'snake' });
    const { data: created } = await bo.POST('/tasks', { body: { title: `tagged ${randomUUID()}` } });
    const path = { params: { path: { id: created!.id } } };
    const { response: read } = await bo.GET('/tasks/{id}', path);
    expect(bo.etagOf(`/tasks/${created!.id}`)).toBe(read.headers.get('etag'));

    await other.PATCH('/tasks/{id}', { ...path, body: { title: 'changed by someone else' } });
    const error = await bo.PATCH('/tasks/{id}', { ...path, body: { status: 'done' } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PreconditionFailedError);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as PreconditionFailedError).status).toBe(412);
    expect((error as PreconditionFailedError).code).toBe('precondition_failed');
    expect((error as PreconditionFailedError).requestId).toMatch(/\S/);
    const { data: now } = await bo.GET('/tasks/{id}', path);
    expect(now).toMatchObject({ title: 'changed by someone else', status: 'todo' });

    const { data: saved } = await bo.PATCH('/tasks/{id}', { ...path, body: { status: 'done' } });
    expect(saved).toMatchObject({ title: 'changed by someone else', status: 'done' });
    expect(bo.etagOf(`/tasks/${created!.id}`)).toBeDefined();
  });

  it('every refusal is a typed problem with its code and request id', async () => {
    const bo = createClient({ baseUrl, apiKey });
    const missing = await bo.GET('/tasks/{id}', { params: { path: { id: randomUUID() } } }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).code).toBe('not_found');
    expect((missing as NotFoundError).requestId).toBe((missing as NotFoundError).headers.get('x-request-id'));
    const stranger = createClient({ baseUrl, apiKey: 'bok_unknown' });
    const refused = await stranger.GET('/users').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(UnauthorizedError);
    expect((refused as UnauthorizedError).requestId).toMatch(/\S/);
  });
});

describe('lists', () => {
  it('iterates a list of 10,000 users completely, page after page over the signed cursors', async () => {
    const emails = Array.from({ length: 10_000 }, (_, i) => `seeded-${i}-${randomUUID().slice(0, 8)}@example.com`);
    await sql`insert into users (email, email_key, first_name, last_name)
              select e, k, 'Seeded', 'User' from unnest(${emails}::text[], ${emails.map(uniqueNameKey)}::text[]) as t(e, k)`.execute(database.db);
    const total = Number((await sql<{ n: string }>`select count(*) as n from users`.execute(database.db)).rows[0]!.n);
    const { attempts, fetch } = recording();
    const bo = createClient({ baseUrl, apiKey, fetch });
    const seen = new Set<string>();
    const seededSeen = new Set<string>();
    for await (const user of bo.list('/users', { params: { query: { limit: 200 } } })) {
      seen.add(user.id);
      if (user.firstName === 'Seeded') seededSeen.add(user.email);
    }
    expect(seededSeen.size).toBe(10_000);
    expect(seen.size).toBe(total);
    expect(attempts.length).toBe(Math.ceil(total / 200));
  }, 60_000);
});

describe('events', () => {
  it('a webhook delivered by the service is verified and typed; a tampered, an old or a foreign one is refused', async () => {
    const receiver = await startReceiver();
    try {
      const bo = createClient({ baseUrl, apiKey });
      const { data: endpoint } = await bo.POST('/webhook-endpoints', { body: { url: receiver.url, eventTypes: ['task.created'], keyStyle: 'camel', enabled: true } });
      const secret = endpoint!.secret!;
      const title = `hooked ${randomUUID()}`;
      const { data: task } = await bo.POST('/tasks', { body: { title } });
      await deliverDue(services.deliveries, database.db);
      await receiver.until(1);
      const got = receiver.received.find((r) => r.body.includes(title))!;

      const event = await verifyWebhook<'camel'>(got.body, got.headers, { secret });
      expect(event.type).toBe('task.created');
      if (event.type === 'task.created') expect(event.data).toMatchObject({ id: task!.id, title, createdBy: { type: 'api_key' } });
      // Several secrets during a rotation: any one that signed is enough.
      const other = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      await expect(verifyWebhook(got.body, got.headers, { secret: [other, secret] })).resolves.toMatchObject({ id: event.id });

      const refusal = (p: Promise<unknown>) => p.then(() => 'accepted', (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e)));
      expect(await refusal(verifyWebhook(got.body.replace(title, `${title}!`), got.headers, { secret }))).toBe('no_matching_signature');
      expect(await refusal(verifyWebhook(got.body, got.headers, { secret: other }))).toBe('no_matching_signature');
      expect(await refusal(verifyWebhook(got.body, got.headers, { secret, now: Date.now() + 600_000 }))).toBe('timestamp_too_old');
      expect(await refusal(verifyWebhook(got.body, { ...got.headers, 'webhook-signature': undefined }, { secret }))).toBe('missing_headers');
    } finally {
      await receiver.close();
    }
  });

  it('signs as the standardwebhooks library verifies (and the library signs as the client verifies)', async () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const body = JSON.stringify({ id: randomUUID(), type: 'task.deleted' });
    const headers = await signedHeaders(secret, 'msg_1', body);
    expect(new Webhook(secret).verify(body, headers)).toMatchObject({ type: 'task.deleted' });
    const at = new Date();
    const librarySigned = new Webhook(secret).sign('msg_2', at, body);
    await expect(verifyWebhook(body, { 'webhook-id': 'msg_2', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': librarySigned }, { secret })).resolves.toMatchObject({ type: 'task.deleted' });
  });

  it('iterates GET /events and resumes from a stored cursor with only what came after', { timeout: 150_000 }, async () => {
    const bo = createClient({ baseUrl, apiKey });
    const mark = randomUUID();
    const { data: first } = await bo.POST('/tasks', { body: { title: `feed ${mark} 1` } });
    /** Reads the feed from `after` until an event of `taskId` shows (the feed holds back events of transactions still open anywhere in the cluster). */
    const readUntil = async (after: string | undefined, taskId: string) => {
      const deadline = Date.now() + 60_000;
      let cursor = after;
      const titles: string[] = [];
      while (Date.now() < deadline) {
        for await (const item of bo.events({ after: cursor, types: ['task.created'], limit: 50 })) {
          if (item.event.type === 'task.created') titles.push(item.event.data.title);
          cursor = item.cursor;
          if (item.event.type === 'task.created' && item.event.data.id === taskId) return { titles, cursor };
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`no event of ${taskId} in the feed`);
    };
    const start = await readUntil(undefined, first!.id);
    expect(start.titles).toContain(`feed ${mark} 1`);
    const stored = start.cursor;

    const { data: second } = await bo.POST('/tasks', { body: { title: `feed ${mark} 2` } });
    const resumed = await readUntil(stored, second!.id);
    expect(resumed.titles.filter((t) => t.includes(mark))).toEqual([`feed ${mark} 2`]);
  });
});

describe('a person’s token set', () => {
  it('refreshes itself once at POST /tokens when the access token has ended, however many calls find it refused at once', async () => {
    const clock = new ManualClock(new Date());
    const made = createTestApp(database.db, { clock, env: ENV });
    const personServer = await listen(made.app);
    try {
      const person = await createUser(database.db, { permissions: ['tasks.list'] });
      const set = await signIn(made.app, person.email, person.password);
      const { attempts, fetch } = recording();
      const stored: Tokens[] = [];
      const bo = createClient({ baseUrl: urlOf(personServer), tokens: set, onTokens: (t) => void stored.push(t), fetch });
      await bo.GET('/tasks');
      clock.advance(11 * 60_000); // past the access token's 600 s
      const answers = await Promise.all(Array.from({ length: 5 }, () => bo.GET('/tasks', { params: { query: { limit: 1 } } })));
      expect(answers.every((a) => a.response.status === 200)).toBe(true);
      expect(attempts.filter((a) => a.path === '/tokens')).toHaveLength(1);
      expect(stored).toHaveLength(1);
      expect(stored[0]!.refreshToken).not.toBe(set.refresh_token);
      expect(bo.tokens()!.accessToken).toBe(stored[0]!.accessToken);
      // The old refresh token is used up: the session still works with the new set.
      const res = await request(made.app).get('/tasks').set('authorization', `Bearer ${stored[0]!.accessToken}`);
      expect(res.status).toBe(200);
    } finally {
      personServer.closeAllConnections();
      await close(personServer);
      await made.services.deliveries.stop();
    }
  }, budget({ passwordHash: 2 }));
});

describe('attack: a redirect to another origin', () => {
  /** A server that records what reaches it (headers and body) and answers 200 `{"data": []}`. */
  async function recorder() {
    const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
    const s = createHttpServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', headers: { ...req.headers }, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"data":[]}');
      });
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return { s, seen, url: urlOf(s) };
  }
  /** A front (a proxy, a moved deployment) answering every request with a redirect to `target` + the path. */
  async function redirecting(target: () => string, status: number) {
    const s = createHttpServer((req, res) => {
      req.resume();
      res.writeHead(status, { location: `${target()}${req.url}` }).end();
    });
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return { s, url: urlOf(s) };
  }

  it('never carries the API key, a refresh token or a body to the other origin, nor follows a redirect within it (the API answers none)', async () => {
    const elsewhere = await recorder();
    const front307 = await redirecting(() => elsewhere.url, 307);
    const front302 = await redirecting(() => elsewhere.url, 302);
    try {
      for (const front of [front307, front302]) {
        const bo = createClient({ baseUrl: front.url, apiKey, retry: { maxRetries: 0 } });
        await bo.GET('/users').catch(() => {});
        await bo.POST('/tasks', { body: { title: 'carried away' } as never }).catch(() => {});
        const person = createClient({ baseUrl: front.url, tokens: { accessToken: 'bot_expired', refreshToken: 'bor_the-refresh-secret', expiresAt: 0 }, retry: { maxRetries: 0 } });
        await person.GET('/users').catch(() => {});
      }
      const leaked = elsewhere.seen.filter((r) => r.headers['x-api-key'] !== undefined || r.headers.authorization !== undefined || r.body.includes('the-refresh-secret') || r.body.includes('carried away'));
      expect(leaked).toEqual([]);

      // Nor within the origin: the API answers no redirect, so one is a front's, answered as it came.
      let followed = false;
      const front = createHttpServer((req, res) => {
        req.resume();
        if (req.url?.startsWith('/moved/')) followed = true;
        res.writeHead(308, { location: `/moved${req.url}` }).end();
      });
      await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
      try {
        const thrown = await createClient({ baseUrl: urlOf(front), apiKey, retry: { maxRetries: 0 } })
          .GET('/users')
          .then(() => undefined, (err: unknown) => err);
        expect(thrown).toBeInstanceOf(ApiError);
        expect((thrown as ApiError).status).toBe(308);
        expect(followed).toBe(false);
      } finally {
        await close(front);
      }
    } finally {
      for (const s of [elsewhere.s, front307.s, front302.s]) {
        s.closeAllConnections();
        await close(s);
      }
    }
  });
});

describe('attack: a credential fetch cannot send', () => {
  it('a key or token holding a line break (two lines of a secrets file read whole) is refused without repeating it in the error', async () => {
    const secretOf = (s: string) => s.split('_')[1]!;
    const other = (await makeApiKey(database.db, ['users.list'])).secret;
    const attempts: unknown[] = [];
    for (const bad of [`${apiKey}\n${other}`, `${apiKey}\r\nx`, `${apiKey}\u0000`]) {
      for (const options of [{ apiKey: bad }, { tokens: { accessToken: bad, refreshToken: 'bor_x' } }]) {
        let thrown: unknown;
        try {
          await createClient({ baseUrl, ...options, retry: { maxRetries: 0 } }).GET('/users');
        } catch (err) {
          thrown = err;
        }
        attempts.push(thrown);
        expect(thrown).toBeInstanceOf(Error);
        const text = `${String(thrown)} ${(thrown as Error).stack} ${JSON.stringify(thrown)} ${String((thrown as Error).cause ?? '')}`;
        expect(text).not.toContain(secretOf(apiKey));
        expect(text).not.toContain(secretOf(other));
      }
    }
    expect(attempts).toHaveLength(6);
  });
});
