// Several identical server processes on one PostgreSQL database behind nginx (a real load
// balancer, started on loopback by the test): requests are spread over the processes, every
// process gives the same answer, and client addresses are right behind the trusted proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { startServerProcess, type ServerProcess } from './support/server-process.js';
import { startNginx, type LoadBalancer } from './support/nginx.js';
import { HttpClient, type RawRequest, type RawResponse } from './support/http-client.js';

const PROCESSES = 3;
let database: TestDatabase;
let servers: ServerProcess[] = [];
let nginx: LoadBalancer;
let client: HttpClient;

beforeAll(async () => {
  database = await createTestDatabase();
  // nginx connects from 127.0.0.1; only that address may set X-Forwarded-For.
  servers = await Promise.all(Array.from({ length: PROCESSES }, () => startServerProcess({ DATABASE_URL: database.url, TRUST_PROXY: '127.0.0.1' })));
  nginx = await startNginx(servers.map((s) => s.port));
  client = new HttpClient(nginx.url, 8);
}, 120_000);

afterAll(async () => {
  client?.close();
  await nginx?.stop();
  const codes = await Promise.all(servers.map((s) => s.stop()));
  expect(codes.every((code) => code === 0)).toBe(true);
  await database?.destroy();
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
      const log = nginx.accessLog();
      const upstreams = new Set(ids.map((id) => log.find((line) => line.requestId === id)?.upstream));
      expect(upstreams.size, `${req.method} ${req.path} reached every process`).toBe(PROCESSES);
    }
  });

  it('takes the client address from X-Forwarded-For set by the trusted proxy, not from the client', async () => {
    // The client connects from 127.0.0.2 and claims to be 203.0.113.9; nginx appends the real address.
    const res = await client.send({ method: 'GET', path: '/users', headers: { 'x-forwarded-for': '203.0.113.9', 'x-request-id': 'client-ip-check-1' } }, { localAddress: '127.0.0.2' });
    expect(res.status).toBe(401);
    const logged = () => servers.flatMap((s) => s.records()).find((r) => (r.req as { id?: string } | undefined)?.id === 'client-ip-check-1');
    await expect.poll(logged, { timeout: 10_000, interval: 50 }).toBeDefined();
    const line = logged();
    expect((line!.req as { ip: string }).ip).toBe('127.0.0.2');
  });
});
