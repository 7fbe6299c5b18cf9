// Request ids, attacked: the id a request is answered, logged and recorded with is the server's own,
// unless the request came through a proxy that TRUST_PROXY names (which sets it, as nginx's
// $request_id). A caller's X-Request-Id never becomes the id of its audit or security events: if
// it did, anyone could give their changes the id of someone else's request, or one id to thousands.
// A sane one is kept in the access line as `clientRequestId`, for the caller's own tracing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { makeApiKey } from './support/access-fixtures.js';
import { systemClock } from '../src/clock.js';
import { budget } from './support/budgets.js';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { HttpClient } from './support/http-client.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const json = (res: request.Response) => JSON.parse(res.text) as Record<string, unknown>;

/** Every event (audit trail and security events share one table) recorded with `requestId`. */
const eventsWithId = (requestId: string) => database.db.selectFrom('security_events').select(['type', 'request_id']).where('request_id', '=', requestId).execute();

/** The access lines of the request answered `requestId`. */
const accessLines = (logs: ReturnType<typeof createTestApp>['logs'], requestId: string) =>
  logs.records().filter((r) => r.msg === 'request completed' && (r.req as { id?: string }).id === requestId);

describe('a caller that is not a trusted proxy (TRUST_PROXY unset)', () => {
  it("audit trail poisoning: a caller's chosen X-Request-Id is not stored as the request_id of its audit event", { timeout: budget({ passwordHash: 2 }) }, async () => {
    const { app } = createTestApp(database.db, { clock: systemClock });
    const auditor = await makeApiKey(database.db, ['audit.read']);
    // The victim's request: an administrator creates a user; its id is in the trail.
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminToken = (await signIn(app, admin.email, admin.password)).access_token;
    await steppedUpInDatabase(database.db, admin.id); // creating a user is a sensitive change (x-step-up)
    const victim = await request(app).post('/users').set('authorization', `Bearer ${adminToken}`).send({ email: 'victim-made@request-id.example', first_name: 'Made', last_name: 'ByAdmin' });
    expect(victim.status).toBe(201);
    const victimId = victim.headers['x-request-id'] as string;
    expect(await eventsWithId(victimId)).toEqual([{ type: 'user_created', request_id: victimId }]);

    // The attacker's key makes changes claiming the victim's request id.
    const attacker = await makeApiKey(database.db, ['users.create']);
    const answered: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(app)
        .post('/users')
        .set('x-api-key', attacker.secret)
        .set('x-request-id', victimId)
        .send({ email: `attacker-made-${i}@request-id.example`, first_name: 'Made', last_name: 'ByAttacker' });
      expect(res.status).toBe(201);
      answered.push(res.headers['x-request-id'] as string);
      // Read back as an investigator would: GET /audit-events, filtered on the new user.
      const trail = await request(app).get('/audit-events').query({ target_id: res.body.id }).set('x-api-key', auditor.secret);
      expect(trail.status).toBe(200);
      expect(trail.body.data).toEqual([expect.objectContaining({ type: 'user_created', actor: expect.objectContaining({ type: 'api_key', id: attacker.id }), request_id: answered[i] })]);
    }
    // Each change carries the server's own id: a new UUID each time, the one answered.
    for (const id of answered) expect(id).toMatch(UUID);
    expect(new Set(answered).size).toBe(3);
    expect(answered).not.toContain(victimId);
    // Searching the trail by the victim's id still finds the victim's event alone.
    expect(await eventsWithId(victimId)).toEqual([{ type: 'user_created', request_id: victimId }]);
  });

  it('audit trail poisoning by a signed-in person: the bearer of a session cannot choose the request_id of its change either', { timeout: budget({ passwordHash: 2 }) }, async () => {
    const { app } = createTestApp(database.db, { clock: systemClock });
    const manager = await createUser(database.db, { permissions: ['roles.manage'] });
    const token = (await signIn(app, manager.email, manager.password)).access_token;
    const res = await request(app).post('/roles').set('authorization', `Bearer ${token}`).set('x-request-id', 'chosen-by-the-bearer').send({ name: 'request-id-role', permissions: [] });
    expect(res.status).toBe(201);
    expect(res.headers['x-request-id']).toMatch(UUID);
    expect(await eventsWithId('chosen-by-the-bearer')).toEqual([]);
    expect(await eventsWithId(res.headers['x-request-id'] as string)).toEqual([{ type: 'role_created', request_id: res.headers['x-request-id'] }]);
  });

  it("security event poisoning: a sign-in, a failed one and a refresh are recorded with the server's id, not the caller's", async () => {
    const { app } = createTestApp(database.db, { clock: systemClock });
    const user = await createUser(database.db);
    const chosen = 'someone-elses-request';
    const failed = await request(app).post('/sessions').set('x-request-id', chosen).send({ session: { email: user.email, password: 'not the password, long enough' } });
    expect(failed.status).toBe(401);
    const signedIn = await request(app).post('/sessions').set('x-request-id', chosen).send({ session: { email: user.email, password: user.password } });
    expect(signedIn.status).toBe(201);
    const refreshed = await request(app).post('/tokens').set('authorization', `Bearer ${signedIn.body.access_token}`).set('x-request-id', chosen).send({ refresh_token: signedIn.body.refresh_token });
    expect(refreshed.status).toBe(201);

    expect(await eventsWithId(chosen)).toEqual([]);
    const ids = [failed, signedIn, refreshed].map((res) => res.headers['x-request-id'] as string);
    for (const id of ids) expect(id).toMatch(UUID);
    expect(new Set(ids).size).toBe(3);
    expect(await eventsWithId(ids[0]!)).toEqual([{ type: 'sign_in_failed', request_id: ids[0] }]);
    expect(await eventsWithId(ids[1]!)).toEqual([{ type: 'sign_in_succeeded', request_id: ids[1] }]);
    expect(await eventsWithId(ids[2]!)).toEqual([{ type: 'tokens_refreshed', request_id: ids[2] }]);
  });

  it("answers the server's id in X-Request-Id and in a problem's request_id, and logs the caller's sane id beside it as clientRequestId", async () => {
    const { app, logs } = createTestApp(database.db);
    const res = await request(app).get('/users').set('x-request-id', 'my-trace:42');
    expect(res.status).toBe(401);
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(UUID);
    expect(json(res).request_id).toBe(id);
    expect(accessLines(logs, id)).toEqual([expect.objectContaining({ req: expect.objectContaining({ id, clientRequestId: 'my-trace:42', method: 'GET', path: '/users' }) })]);
  });

  it('ignores an insane X-Request-Id: not the id, not in the log', async () => {
    const { app, logs } = createTestApp(database.db);
    for (const insane of ['has spaces', 'x'.repeat(129), 'quote"d', 'new\u00e9line']) {
      const res = await request(app).get('/livez').set('x-request-id', insane);
      const id = res.headers['x-request-id'] as string;
      expect(id).toMatch(UUID);
      const [line] = accessLines(logs, id);
      expect(line!.req).not.toHaveProperty('clientRequestId');
    }
    expect(logs.text()).not.toContain('has spaces');
    expect(logs.text()).not.toContain('x'.repeat(129));
  });

  it('logs no clientRequestId when the caller sends none', async () => {
    const { app, logs } = createTestApp(database.db);
    const res = await request(app).get('/livez');
    const [line] = accessLines(logs, res.headers['x-request-id'] as string);
    expect(line!.req).not.toHaveProperty('clientRequestId');
  });
});

describe('behind a trusted proxy (TRUST_PROXY names the peer: here the test, on loopback)', () => {
  it("takes the proxy's X-Request-Id as the request's id: answered, in a problem, in the log and on the audit event", async () => {
    const { app, logs } = createTestApp(database.db, { clock: systemClock, env: { TRUST_PROXY: 'loopback' } });
    const key = await makeApiKey(database.db, ['users.create']);
    const proxyId = 'f3b1c0de9a8b7c6d5e4f30211a2b3c4d'; // as nginx's $request_id
    const made = await request(app).post('/users').set('x-api-key', key.secret).set('x-request-id', proxyId).send({ email: 'via-proxy@request-id.example', first_name: 'Via', last_name: 'Proxy' });
    expect(made.status).toBe(201);
    expect(made.headers['x-request-id']).toBe(proxyId);
    expect(await eventsWithId(proxyId)).toEqual([{ type: 'user_created', request_id: proxyId }]);
    const [line] = accessLines(logs, proxyId);
    expect(line!.req).not.toHaveProperty('clientRequestId');

    const refused = await request(app).get('/users').set('x-request-id', 'proxy-id-2');
    expect(refused.headers['x-request-id']).toBe('proxy-id-2');
    expect(json(refused).request_id).toBe('proxy-id-2');
  });

  it('takes the address forms TRUST_PROXY accepts (an address, a hop count)', async () => {
    for (const trust of ['127.0.0.1,::1', '1']) {
      const { app } = createTestApp(database.db, { env: { TRUST_PROXY: trust } });
      const res = await request(app).get('/livez').set('x-request-id', `proxy-${trust.length}`);
      expect(res.headers['x-request-id'], `TRUST_PROXY=${trust}`).toBe(`proxy-${trust.length}`);
    }
  });

  it("makes its own id when the trusted proxy sends none, or an insane one", async () => {
    const { app } = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } });
    expect((await request(app).get('/livez')).headers['x-request-id']).toMatch(UUID);
    expect((await request(app).get('/livez').set('x-request-id', 'bad id')).headers['x-request-id']).toMatch(UUID);
  });

  it('proxy impersonation: a peer that TRUST_PROXY does not name, claiming a trusted address in X-Forwarded-For, does not choose the id', async () => {
    const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: '10.0.0.5' } });
    const res = await request(app).get('/livez').set('x-forwarded-for', '10.0.0.5').set('x-request-id', 'posing-as-the-proxy');
    const id = res.headers['x-request-id'] as string;
    expect(id).toMatch(UUID);
    expect(accessLines(logs, id)).toEqual([expect.objectContaining({ req: expect.objectContaining({ clientRequestId: 'posing-as-the-proxy' }) })]);
  });
});

describe('security: request ids: secrets and spoofing', () => {
  /** A caller's secrets of every kind: an API key, an access token, a refresh token. */
  async function secretsOfACaller(app: Parameters<typeof request>[0]) {
    const key = await makeApiKey(database.db, ['users.list']);
    const user = await createUser(database.db, { permissions: ['users.list'] });
    const set = await signIn(app, user.email, user.password);
    return { 'API key': key.secret, 'access token': set.access_token, 'refresh token': set.refresh_token };
  }

  it('secret in the access log: a caller sending its own API key or token as X-Request-Id does not get it logged, answered or recorded', async () => {
    for (const env of [{}, { TRUST_PROXY: 'loopback' }] as Record<string, string>[]) {
      const { app, logs } = createTestApp(database.db, { clock: systemClock, env });
      for (const [what, secret] of Object.entries(await secretsOfACaller(app))) {
        // As the id itself, and inside a longer, sane-looking one.
        for (const sent of [secret, `trace:${secret}`, `${secret}.1`]) {
          const res = await request(app).get('/users').set('x-api-key', (await makeApiKey(database.db, ['users.list'])).secret).set('x-request-id', sent);
          expect(res.status, `${what} ${JSON.stringify(env)}`).toBe(200);
          expect(res.headers['x-request-id'], `${what} ${JSON.stringify(env)}`).toMatch(UUID);
        }
        // The body of the secret (its random part) appears in no log line.
        expect(logs.text(), `${what} ${JSON.stringify(env)}`).not.toContain(secret.split('_')[1]);
      }
      // A sign-in (which records an event with the request id) sent with a secret as its id.
      const user = await createUser(database.db);
      const mine = await signIn(app, user.email, user.password);
      const again = await request(app).post('/sessions').set('x-request-id', mine.access_token).send({ session: { email: user.email, password: user.password } });
      expect(again.status).toBe(201);
      expect(await database.db.selectFrom('security_events').select('id').where('request_id', 'like', `%${mine.access_token.split('_')[1]!}%`).execute()).toEqual([]);
      expect(logs.text()).not.toContain(mine.access_token.split('_')[1]);
    }
  });

  it('the secret filter is not a blanket one: trace ids that are no secret of ours are still logged, and still taken from a trusted proxy', async () => {
    const { app, logs } = createTestApp(database.db);
    for (const sent of ['bok_not-a-secret_trace', 'f'.repeat(64), `${'a'.repeat(42)}-${'b'.repeat(44)}`]) {
      const res = await request(app).get('/livez').set('x-request-id', sent);
      const line = logs.records().find((r) => r.msg === 'request completed' && (r.req as { id?: string }).id === res.headers['x-request-id']);
      expect(line!.req).toMatchObject({ clientRequestId: sent });
    }
    const behindProxy = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } }).app;
    for (const sent of ['f3b1c0de9a8b7c6d5e4f30211a2b3c4d', 'e'.repeat(64)]) {
      expect((await request(behindProxy).get('/livez').set('x-request-id', sent)).headers['x-request-id']).toBe(sent);
    }
  });

  it('header smuggling: two X-Request-Id headers (the proxy\u2019s and a client\u2019s passed along) are not taken, even from a trusted proxy', async () => {
    const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback' } });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      // Raw bytes, so both header lines reach the server as sent.
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1');
      socket.end('GET /livez HTTP/1.1\r\nHost: x\r\nX-Request-Id: proxy-id\r\nX-Request-Id: chosen-by-client\r\nConnection: close\r\n\r\n');
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk) => (text += String(chunk)));
        socket.on('close', () => resolve(text));
      });
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect(/\r\nx-request-id: ([^\r]*)\r\n/i.exec(answer)?.[1]).toMatch(UUID);
      expect(logs.text()).not.toContain('chosen-by-client');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('verdict leak between connections: a trusted proxy\u2019s open connection does not make another peer\u2019s connection trusted, nor the reverse', async () => {
    // 127.0.0.1 is the proxy; 127.0.0.2 (also loopback, but not named) is anyone else. On an IPv6
    // socket both arrive as IPv4-mapped addresses (::ffff:127.0.0.x).
    for (const host of ['0.0.0.0', '::']) {
      const { app, logs } = createTestApp(database.db, { env: { TRUST_PROXY: '127.0.0.1' } });
      const server = app.listen(0, host);
      await new Promise((resolve) => server.once('listening', resolve));
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const proxy = new HttpClient(url, 1);
      const stranger = new HttpClient(url, 1);
      try {
        const idFrom = async (client: HttpClient, localAddress: string, sent: string) =>
          String((await client.send({ method: 'GET', path: '/livez', headers: { 'x-request-id': sent, 'x-forwarded-for': '127.0.0.1' } }, { localAddress })).headers['x-request-id']);
        // Interleaved on two kept-alive connections, in both orders, several times each.
        for (let i = 0; i < 3; i++) {
          expect(await idFrom(stranger, '127.0.0.2', `stranger-${i}`), host).toMatch(UUID);
          expect(await idFrom(proxy, '127.0.0.1', `proxy-${i}`), host).toBe(`proxy-${i}`);
        }
        // A new connection from the stranger after the proxy's verdict was cached.
        const fresh = new HttpClient(url, 1);
        expect(await idFrom(fresh, '127.0.0.2', 'fresh-stranger'), host).toMatch(UUID);
        fresh.close();
        expect(logs.text()).toContain('"clientRequestId":"fresh-stranger"');
      } finally {
        proxy.close();
        stranger.close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    }
  });
});
