// The client's retry, credential and error rules (clients/typescript/src/transport.ts) against a
// scripted fetch: the cases the real service does not produce on demand (a 503, an HTTP-date
// Retry-After, a refresh that fails) and the exact waits. test/client.test.ts is the real service.
import { describe, expect, it } from 'vitest';
import { createTransport, serverWaitMs, type TransportOptions } from '../clients/typescript/src/transport.js';
import { ApiError, NetworkError, PreconditionFailedError, RateLimitedError, UnauthorizedError } from '../clients/typescript/src/errors.js';

type Scripted = Response | Error | ((request: Request) => Response | Error);

function scripted(answers: Scripted[], options: Partial<TransportOptions> = {}) {
  const requests: Request[] = [];
  const waits: number[] = [];
  const transport = createTransport({
    baseUrl: 'http://service.test',
    style: 'camel',
    apiKey: 'bok_test',
    sleep: async (ms) => void waits.push(ms),
    random: () => 0.5,
    ...options,
    fetch: async (request) => {
      requests.push(request.clone());
      const next = answers.shift();
      if (!next) throw new Error('no answer scripted');
      const answer = typeof next === 'function' ? next(request) : next;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  });
  return { transport, requests, waits };
}

const problem = (status: number, code: string, headers: Record<string, string> = {}, extra: object = {}) =>
  new Response(JSON.stringify({ type: `urn:problem:backoffice:${code}`, title: code, status, code, requestId: 'req-1', ...extra }), { status, headers: { 'content-type': 'application/problem+json', ...headers } });
const json = (body: object, status = 200, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
const get = (path: string) => new Request(`http://service.test${path}`);
const send = (method: string, path: string, body: object) => new Request(`http://service.test${path}`, { method, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });

describe('waits', () => {
  it('reads Retry-After as seconds or an HTTP date, else the RateLimit field’s reset', () => {
    expect(serverWaitMs(new Headers({ 'retry-after': '7' }))).toBe(7000);
    expect(serverWaitMs(new Headers({ 'retry-after': new Date(1_000_000 + 5000).toUTCString() }), 1_000_000)).toBe(5000);
    expect(serverWaitMs(new Headers({ ratelimit: '"api-key";r=0;t=12' }))).toBe(12_000);
    expect(serverWaitMs(new Headers())).toBeUndefined();
  });

  it('waits out a 429 for Retry-After plus jitter, never less; gives up after maxRetries with RateLimitedError', async () => {
    const limited = () => problem(429, 'rate_limited', { 'retry-after': '2' }, { retryAfter: 2 });
    const { transport, requests, waits } = scripted([limited(), limited(), limited()], { retry: { maxRetries: 2 } });
    const error = await transport.fetch(get('/users'), '/users').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterSeconds).toBe(2);
    expect(requests).toHaveLength(3);
    expect(waits).toHaveLength(2);
    for (const wait of waits) expect(wait).toBeGreaterThanOrEqual(2000);
    for (const wait of waits) expect(wait).toBeLessThanOrEqual(2000 + 1000);
  });

  it('backs off with full jitter, doubling, when the service gives no hint (a 503 of a read)', async () => {
    const { transport, waits } = scripted([problem(503, 'unavailable'), problem(503, 'unavailable'), json({ ok: true })], { retry: { baseDelayMs: 100 } });
    expect((await transport.fetch(get('/users'), '/users')).status).toBe(200);
    expect(waits).toEqual([50, 100]); // random() = 0.5 of 100, then of 200
  });
});

describe('what is retried', () => {
  it('a 503 of a change is not retried (it may have been made): thrown at once', async () => {
    const { transport, requests } = scripted([problem(503, 'unavailable')]);
    const error = await transport.fetch(send('PATCH', '/tasks/1', { title: 'x' }), '/tasks/{id}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(503);
    expect(requests).toHaveLength(1);
  });

  it('a network error of a POST that is no create (no Idempotency-Key) is not retried: NetworkError', async () => {
    const { transport, requests } = scripted([new TypeError('fetch failed')]);
    await expect(transport.fetch(send('POST', '/webhook-endpoints/1/test', {}), '/webhook-endpoints/{id}/test')).rejects.toBeInstanceOf(NetworkError);
    expect(requests).toHaveLength(1);
  });

  it('a create gets one Idempotency-Key, kept across a network error and a 409 idempotency_key_in_progress', async () => {
    const { transport, requests } = scripted([new TypeError('fetch failed'), problem(409, 'idempotency_key_in_progress', { 'retry-after': '1' }), json({ id: 't' }, 201)]);
    expect((await transport.fetch(send('POST', '/tasks', { title: 'x' }), '/tasks')).status).toBe(201);
    const keys = requests.map((r) => r.headers.get('idempotency-key'));
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(await Promise.all(requests.map((r) => r.text()))).toEqual(Array(3).fill('{"title":"x"}'));
    expect(requests.every((r) => r.headers.get('x-api-inflection') === 'camel' && r.headers.get('x-api-key') === 'bok_test')).toBe(true);
  });
});

describe('tags', () => {
  it('sends the tag read as If-Match; after a 412 keeps sending it (never an untagged overwrite) until read again', async () => {
    const { transport, requests } = scripted([
      json({ id: '1' }, 200, { etag: '"a"' }),
      problem(412, 'precondition_failed'),
      problem(412, 'precondition_failed'),
      json({ id: '1' }, 200, { etag: '"b"' }),
      json({ id: '1' }, 200, { etag: '"c"' }),
    ]);
    await transport.fetch(get('/tasks/1'), '/tasks/{id}');
    await expect(transport.fetch(send('PATCH', '/tasks/1', { title: 'x' }), '/tasks/{id}')).rejects.toBeInstanceOf(PreconditionFailedError);
    await expect(transport.fetch(send('PATCH', '/tasks/1', { title: 'x' }), '/tasks/{id}')).rejects.toBeInstanceOf(PreconditionFailedError);
    await transport.fetch(get('/tasks/1'), '/tasks/{id}');
    await transport.fetch(send('PATCH', '/tasks/1', { title: 'x' }), '/tasks/{id}');
    expect(requests.map((r) => r.headers.get('if-match'))).toEqual([null, '"a"', '"a"', null, '"b"']);
    expect(transport.etagOf('/tasks/1')).toBe('"c"');
  });
});

describe('problems', () => {
  it('reads the code and the request id in every key style, else the X-Request-Id header', async () => {
    for (const [body, expected] of [
      [{ code: 'not_found', request_id: 'r-snake' }, 'r-snake'],
      [{ Code: 'not_found', RequestId: 'r-pascal' }, 'r-pascal'],
      [{ code: 'not_found', 'request-id': 'r-dash' }, 'r-dash'],
      [{ code: 'not_found' }, 'r-header'],
    ] as const) {
      const { transport } = scripted([new Response(JSON.stringify(body), { status: 404, headers: { 'x-request-id': 'r-header' } })]);
      const error = (await transport.fetch(get('/tasks/1'), '/tasks/{id}').catch((e: unknown) => e)) as ApiError;
      expect([error.code, error.requestId]).toEqual(['not_found', expected]);
    }
    const { transport } = scripted([new Response('<html>bad gateway</html>', { status: 502 })]);
    const error = (await transport.fetch(get('/tasks/1'), '/tasks/{id}').catch((e: unknown) => e)) as ApiError;
    expect(error.code).toBe('http_502');
  });
});

describe('a token set', () => {
  it('refreshes once for every call refused at once; a refused refresh rejects them all with UnauthorizedError, one POST /tokens', async () => {
    let refreshes = 0;
    const answer = (request: Request) => {
      if (new URL(request.url).pathname === '/tokens') {
        refreshes++;
        return problem(401, 'invalid_token');
      }
      return problem(401, 'token_expired');
    };
    const { transport } = scripted(Array(10).fill(answer), { apiKey: undefined, tokens: { accessToken: 'boa_old', refreshToken: 'bor_old' } });
    const results = await Promise.allSettled([1, 2, 3].map(() => transport.fetch(get('/tasks'), '/tasks')));
    expect(results.every((r) => r.status === 'rejected' && r.reason instanceof UnauthorizedError)).toBe(true);
    expect(refreshes).toBe(1);
  });

  it('refreshes before sending when the access token is about to end, and hands the new set over', async () => {
    const seen: string[] = [];
    const answer = (request: Request) => {
      if (new URL(request.url).pathname === '/tokens') return json({ token_type: 'Bearer', expires_in: 600, access_token: 'boa_new', refresh_token: 'bor_new' }, 201);
      seen.push(request.headers.get('authorization')!);
      return json({ data: [] });
    };
    const stored: string[] = [];
    const { transport, requests } = scripted([answer, answer], { apiKey: undefined, tokens: { accessToken: 'boa_old', refreshToken: 'bor_old', expiresAt: Date.now() + 5000 }, onTokens: (t) => void stored.push(t.refreshToken) });
    await transport.fetch(get('/tasks'), '/tasks');
    expect(seen).toEqual(['Bearer boa_new']);
    expect(stored).toEqual(['bor_new']);
    expect(await requests[0]!.json()).toEqual({ refresh_token: 'bor_old' });
    expect(requests[0]!.headers.get('authorization')).toBe('Bearer boa_old');
  });
});
