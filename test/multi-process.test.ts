// Several identical server processes on one PostgreSQL database behind nginx (a real load
// balancer, started on loopback by the test): requests are spread over the processes, every
// process gives the same answer, and client addresses are right behind the trusted proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestDatabase } from './support/context.js';
import type { ServerProcess } from './support/server-process.js';
import { startBalancedService, type BalancedService } from './support/balanced-service.js';
import { HttpClient, type RawRequest, type RawResponse } from './support/http-client.js';
import { createUser } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';
import { sql } from 'kysely';
import { HEARD_DEADLINE_MS, answersOnceHeard, heardBudget } from './support/key-cache.js';

const PROCESSES = 3;
let service: BalancedService;
let database: TestDatabase;
let servers: ServerProcess[] = [];
let client: HttpClient;
/** One client per process, to address a given process directly. */
let direct: HttpClient[] = [];

beforeAll(async () => {
  service = await startBalancedService(PROCESSES);
  ({ database, servers, client, direct } = service);
}, 120_000);

afterAll(async () => {
  const codes = await service?.stop();
  expect(codes?.every((code) => code === 0)).toBe(true);
});

/** An answer without what differs on purpose between two requests: the request id (and the ETag of a body holding it) and the date. */
function comparable(res: RawResponse) {
  const body = res.body && typeof res.body === 'object' ? { ...(res.body as Record<string, unknown>), request_id: undefined, requestId: undefined } : res.text;
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([k]) => !['date', 'x-request-id', 'etag', 'content-length', 'connection', 'keep-alive'].includes(k)));
  return { status: res.status, headers, body };
}

const REQUESTS: RawRequest[] = [
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/users' },
  { method: 'GET', path: '/users', headers: { 'x-api-key': 'bok_unknown' } },
  { method: 'GET', path: '/utilisateurs', headers: { authorization: 'Bearer boa_unknown', 'x-api-inflection': 'camel' } },
  { method: 'POST', path: '/sessions', headers: { 'content-type': 'application/json' }, body: '{"session":{"email":"a@b.co","password":7}}' },
  { method: 'POST', path: '/tokens', headers: { 'content-type': 'text/plain' }, body: 'x' },
  { method: 'GET', path: '/openapi.json' },
];

describe(`${PROCESSES} server processes behind nginx`, () => {
  it('spreads requests over every process, and every process answers the same', async () => {
    const rounds = PROCESSES * 4;
    for (const req of REQUESTS) {
      const answers: ReturnType<typeof comparable>[] = [];
      const ids: string[] = [];
      for (let i = 0; i < rounds; i++) {
        const res = await client.send(req);
        answers.push(comparable(res));
        ids.push(String(res.headers['x-request-id']));
      }
      for (const answer of answers) expect(answer, `${req.method} ${req.path}`).toEqual(answers[0]);
      // Which process served each one, from nginx's access log.
      // nginx writes its log line just after the answer: wait for all of them.
      await expect.poll(() => ids.every((id) => service.nginx.accessLog().some((line) => line.requestId === id)), { timeout: 5_000, interval: 20 }).toBe(true);
      const log = service.nginx.accessLog();
      const upstreams = new Set(ids.map((id) => log.find((line) => line.requestId === id)?.upstream));
      expect(upstreams.size, `${req.method} ${req.path} reached every process`).toBe(PROCESSES);
    }
  });

  it('takes the client address from X-Forwarded-For set by the trusted proxy, not from the client', async () => {
    // The client connects from 127.0.0.2 and claims to be 203.0.113.9; nginx appends the real address.
    const res = await client.send({ method: 'GET', path: '/users', headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'client-ip-check-1' } }, { localAddress: '127.0.0.2' });
    expect(res.status).toBe(401);
    const logged = () => servers.flatMap((s) => s.records()).find((r) => (r.req as { id?: string } | undefined)?.id === res.headers['x-request-id']);
    await expect.poll(logged, { timeout: 10_000, interval: 50 }).toBeDefined();
    const line = logged();
    expect((line!.req as { ip: string }).ip).toBe('127.0.0.2');
  });

  it("audit trail poisoning through the load balancer: a client's X-Request-Id is replaced by nginx's $request_id, which the service records", async () => {
    const user = await createUser(database.db);
    const chosen = 'someone-elses-request-id';
    const res = await client.send({ ...signInRequest(user.email, user.password), headers: { ...json, 'x-request-id': chosen } }, { localAddress: '127.0.0.2' });
    expect(res.status).toBe(201);
    const id = String(res.headers['x-request-id']);
    expect(id).toMatch(/^[0-9a-f]{32}$/); // nginx's $request_id
    await expect.poll(() => service.nginx.accessLog().find((line) => line.requestId === id), { timeout: 5_000, interval: 20 }).toMatchObject({ proxyRequestId: id });
    const events = await database.db.selectFrom('security_events').select(['type', 'request_id']).where('user_id', '=', user.id).where('type', '=', 'sign_in_succeeded').execute();
    expect(events).toEqual([{ type: 'sign_in_succeeded', request_id: id }]);
    expect(await database.db.selectFrom('security_events').select('id').where('request_id', '=', chosen).execute()).toEqual([]);
    // The service's access line: nginx's id, and no client id (nginx did not pass it on).
    const logged = () => servers.flatMap((s) => s.records()).find((r) => r.msg === 'request completed' && (r.req as { id?: string } | undefined)?.id === id);
    await expect.poll(logged, { timeout: 10_000, interval: 50 }).toBeDefined();
    expect(logged()!.req).not.toHaveProperty('clientRequestId');
  });
});

const json = { 'content-type': 'application/json' };
const signInRequest = (email: string, password: string): RawRequest => ({ method: 'POST', path: '/sessions', headers: json, body: JSON.stringify({ session: { email, password } }) });
const me = (accessToken: string): RawRequest => ({ method: 'GET', path: '/me', headers: { authorization: `Bearer ${accessToken}` } });

describe('sessions across processes (PostgreSQL is the only shared state)', () => {
  it('refuses on every other process, at the next request, a session revoked through one process', async () => {
    const user = await createUser(database.db);
    const signedIn = await direct[0]!.send(signInRequest(user.email, user.password));
    expect(signedIn.status).toBe(201);
    const { access_token } = signedIn.body as { access_token: string };
    for (const d of direct) expect((await d.send(me(access_token))).status).toBe(200);
    const signOut = await direct[1]!.send({ method: 'DELETE', path: '/sessions/current', headers: { authorization: `Bearer ${access_token}` } });
    expect(signOut.status).toBe(204);
    for (const d of direct) {
      const res = await d.send(me(access_token));
      expect(res.status).toBe(401);
      expect((res.body as { code: string }).code).toBe('invalid_token');
    }
  });

  it('counts failed sign-ins together, whichever process they reach', async () => {
    const user = await createUser(database.db);
    for (let i = 0; i < 10; i++) {
      const res = await direct[i % PROCESSES]!.send(signInRequest(user.email, 'a wrong password, long enough'));
      expect(res.status).toBe(401);
    }
    // The lock holds on every process, even for the right password.
    for (const d of direct) {
      const res = await d.send(signInRequest(user.email, user.password));
      expect(res.status).toBe(429);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('gives every racing refresh, on whichever process, the same new token set, and advances the session once', async () => {
    const user = await createUser(database.db);
    const signedIn = await client.send(signInRequest(user.email, user.password));
    const set = signedIn.body as { access_token: string; refresh_token: string };
    const refresh: RawRequest = { method: 'POST', path: '/tokens', headers: { ...json, authorization: `Bearer ${set.access_token}` }, body: JSON.stringify({ refresh_token: set.refresh_token }) };
    const racing = await Promise.all(Array.from({ length: 30 }, (_, i) => direct[i % PROCESSES]!.send(refresh)));
    expect(racing.map((r) => r.status)).toEqual(racing.map(() => 201));
    const tokens = new Set(racing.map((r) => JSON.stringify(r.body)));
    expect(tokens.size, 'one new token set for all').toBe(1);
    const next = racing[0]!.body as { access_token: string; refresh_token: string };
    expect(next.refresh_token).not.toBe(set.refresh_token);
    // The new set works on every process; the session is one generation on.
    for (const d of direct) expect((await d.send(me(next.access_token))).status).toBe(200);
    const again = await direct[2]!.send({ ...refresh, headers: { ...json, authorization: `Bearer ${next.access_token}` }, body: JSON.stringify({ refresh_token: next.refresh_token }) });
    expect(again.status).toBe(201);
  });
});

describe('API keys across processes (what a process keeps of a key, it drops when it hears of a change)', () => {
  let bearer: Record<string, string>;
  const usersWithKey = (secret: string, ip: string): RawRequest => ({ method: 'GET', path: '/users', headers: { 'x-api-key': secret, 'x-forwarded-for': ip } });
  const lastUse = (id: string) => database.db.selectFrom('api_keys').select(['last_used_at', 'last_used_ip']).where('id', '=', id).executeTakeFirstOrThrow();
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  beforeAll(async () => {
    // users.list too: rotating a key needs every permission it holds (docs/AUTH.md).
    const admin = await createUser(database.db, { permissions: ['api_keys.manage', 'users.list'] });
    const signedIn = await client.send(signInRequest(admin.email, admin.password));
    bearer = { authorization: `Bearer ${(signedIn.body as { access_token: string }).access_token}` };
    // Rotating a key is a sensitive change (docs/AUTH.md, "Step-up").
    const proof = await client.send({ method: 'POST', path: '/sessions/current/step-up', headers: { 'content-type': 'application/json', ...bearer }, body: JSON.stringify({ password: admin.password }) });
    expect(proof.status).toBe(200);
  });

  it('records the last use (time and client IP) at most once a minute, whichever process served', { timeout: heardBudget(PROCESSES) }, async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    for (let p = 0; p < PROCESSES; p++) {
      // A minute since the last recorded use, brought about in the database rather than waited for.
      // A recorded use notifies no process (it changes no answer), so each one's copy of the key
      // carries the last use of when it was loaded, which a real minute would age as well: the
      // test tells them of its shift, as a key change would.
      if (p > 0) await sql`with shifted as (update api_keys set last_used_at = last_used_at - interval '61 seconds' where id = ${key.id} returning id)
        select pg_notify('api_key_changes', 'k:' || id) from shifted`.execute(database.db);
      const ip = `198.51.100.${p + 1}`;
      const sentAt = Date.now();
      // The write is not awaited by the answer: wait for it. Asked again until it lands: a request
      // that reaches the process before the test's notification does still sees the unshifted use.
      await expect
        .poll(
          async () => {
            expect((await direct[p]!.send(usersWithKey(key.secret, ip))).status).toBe(200);
            return (await lastUse(key.id)).last_used_ip;
          },
          { timeout: HEARD_DEADLINE_MS, interval: 20 },
        )
        .toBe(ip);
      const recorded = await lastUse(key.id);
      expect(Math.abs(recorded.last_used_at!.getTime() - sentAt)).toBeLessThan(60_000);

      // Within the minute, requests on every process (from other addresses) change nothing.
      const burst = await Promise.all(direct.flatMap((d, i) => [1, 2, 3].map((n) => d.send(usersWithKey(key.secret, `203.0.113.${i * 10 + n}`)))));
      expect(burst.map((r) => r.status)).toEqual(burst.map(() => 200));
      await sleep(300); // room for a wrong, unawaited write to land
      expect(await lastUse(key.id)).toEqual(recorded);
      // Every process shows the same record.
      for (const d of direct) {
        const shown = await d.send({ method: 'GET', path: `/api-keys/${key.id}`, headers: bearer });
        expect(shown.status).toBe(200);
        expect(shown.body).toMatchObject({ last_used_at: recorded.last_used_at!.toISOString(), last_used_ip: ip });
      }
    }
  });

  it('honours a rotation with a grace period alike on every process, and ends the grace alike', { timeout: heardBudget(2 * PROCESSES) }, async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    const rotate = (id: string, grace: number): RawRequest => ({ method: 'POST', path: `/api-keys/${id}/rotate`, headers: { ...json, ...bearer }, body: JSON.stringify({ grace_period_seconds: grace }) });
    const rotated = await direct[0]!.send(rotate(key.id, 3_600));
    expect(rotated.status).toBe(200);
    const next = (rotated.body as { secret: string }).secret;
    expect(next).not.toBe(key.secret);
    for (const d of direct) {
      expect((await d.send(usersWithKey(key.secret, '198.51.100.20'))).status, 'old secret in its grace period').toBe(200);
      expect((await d.send(usersWithKey(next, '198.51.100.20'))).status, 'new secret').toBe(200);
    }
    // The grace period ends (brought forward in the database rather than waited for an hour).
    await database.db.updateTable('api_key_secrets').set({ retires_at: new Date(Date.now() - 1_000) }).where('api_key_id', '=', key.id).where('retires_at', 'is not', null).execute();
    for (const d of direct) {
      const old = await answersOnceHeard(() => d.send(usersWithKey(key.secret, '198.51.100.20')), 401);
      expect((old.body as { code: string }).code).toBe('invalid_api_key');
      expect((await d.send(usersWithKey(next, '198.51.100.20'))).status).toBe(200);
    }
    // A rotation without grace through another process: the previous secret is refused everywhere once heard.
    const again = await direct[1]!.send(rotate(key.id, 0));
    expect(again.status).toBe(200);
    const third = (again.body as { secret: string }).secret;
    for (const d of direct) {
      await answersOnceHeard(() => d.send(usersWithKey(next, '198.51.100.20')), 401);
      expect((await d.send(usersWithKey(third, '198.51.100.20'))).status).toBe(200);
    }
  });

  it('refuses on every other process, once it has heard of it, a key revoked through one process', { timeout: heardBudget(PROCESSES) }, async () => {
    const key = await makeApiKey(database.db, ['users.list']);
    for (const d of direct) expect((await d.send(usersWithKey(key.secret, '198.51.100.30'))).status).toBe(200);
    const revoked = await direct[2]!.send({ method: 'DELETE', path: `/api-keys/${key.id}`, headers: bearer });
    expect(revoked.status).toBe(204);
    for (const d of direct) {
      const res = await answersOnceHeard(() => d.send(usersWithKey(key.secret, '198.51.100.30')), 401);
      expect((res.body as { code: string }).code).toBe('invalid_api_key');
    }
  });
});
