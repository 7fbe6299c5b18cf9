// Every error the service can produce answers problem+json with a stable code and no stack trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { buildServices, createHandlers } from '../src/composition.js';
import type { HandlerMap } from '../src/http/handler-types.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

function expectProblem(res: request.Response, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.code ?? JSON.parse(res.text).code).toBe(code);
  expect(res.text).not.toMatch(/\bat .+\.(ts|js):\d+/); // no stack frames
  expect(JSON.parse(res.text).request_id).toBe(res.headers['x-request-id']);
}

describe('problem+json errors', () => {
  it('answers malformed JSON with 400 malformed_json', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).post('/sessions').set('content-type', 'application/json').send('{"session": ');
    expectProblem(res, 400, 'malformed_json');
    expectContractResponse(res, 'POST', '/sessions');
  });

  it('attack: a sign-in body that is not JSON around its password (unquoted, or the whole body a string): the log line of the refusal, at any level, quotes none of it', async () => {
    const { app, logs } = createTestApp(database.db);
    for (const body of ['{"session":{"email":"a@b.co","password":Tr0ub4dor}}', ' "Tr0ub4dor&3"', '{"session":{"password":"Tr0ub4dor"}}}']) {
      const res = await request(app).post('/sessions').set('content-type', 'application/json').send(body);
      expectProblem(res, 400, 'malformed_json');
    }
    expect(logs.text()).toContain('request refused'); // the refusals are logged (at debug), without the body
    expect(logs.text()).not.toMatch(/Tr0ub|ub4dor/);
  });

  it('answers a body over the limit with 413 payload_too_large', async () => {
    const { app } = createTestApp(database.db, { options: { bodyLimitBytes: 1024 } });
    const res = await request(app)
      .post('/sessions')
      .set('content-type', 'application/json')
      .send(JSON.stringify({ session: { email: 'a@b.co', password: 'x'.repeat(5000) } }));
    expectProblem(res, 413, 'payload_too_large');
    expectContractResponse(res, 'POST', '/sessions');
  });

  it('attack: a body that is not what its Content-Encoding says (gzip, deflate, br; garbage or cut short) answers 400 malformed_json, not 500', async () => {
    const { app } = createTestApp(database.db, { options: { bodyLimitBytes: 1024 } });
    const json = JSON.stringify({ session: { email: 'a@b.co', password: 'x' } });
    const cut = gzipSync(json).subarray(0, 12);
    const raw = (body: unknown) => body as string; // the bytes as given, not serialised as JSON
    for (const [encoding, body] of [['gzip', Buffer.from(json)], ['deflate', Buffer.from(json)], ['br', Buffer.from(json)], ['gzip', cut]] as const) {
      const res = await request(app).post('/sessions').set('content-type', 'application/json').set('content-encoding', encoding).serialize(raw).send(body);
      expectProblem(res, 400, 'malformed_json');
      expectContractResponse(res, 'POST', '/sessions');
    }
    // What the encoding says it is still reads, and inflated past the limit is still too large.
    const fine = await request(app).post('/sessions').set('content-type', 'application/json').set('content-encoding', 'gzip').serialize(raw).send(gzipSync(json));
    expectProblem(fine, 401, 'invalid_credentials');
    const bomb = await request(app).post('/sessions').set('content-type', 'application/json').set('content-encoding', 'gzip').serialize(raw).send(gzipSync(JSON.stringify({ session: { email: 'a@b.co', password: 'x'.repeat(100_000) } })));
    expectProblem(bomb, 413, 'payload_too_large');
  });

  it('answers an unknown route with 404 not_found', async () => {
    const { app } = createTestApp(database.db);
    expectProblem(await request(app).get('/nowhere'), 404, 'not_found');
    expectProblem(await request(app).get('/users/extra/segments'), 404, 'not_found');
  });

  it('answers a path parameter that is not valid percent-encoding with 400, not 500', async () => {
    const { app } = createTestApp(database.db);
    // A credential, refused later: without one, the request is answered 401 before its path is judged.
    const res = await request(app).get('/users/%E0%A4%A').set('authorization', 'Bearer nope');
    expectProblem(res, 400, 'validation_failed');
  });

  it('serves the paths as the contract writes them: /USERS is not /users', async () => {
    const { app } = createTestApp(database.db);
    expectProblem(await request(app).get('/USERS').set('authorization', 'Bearer nope').set('accept', 'application/json'), 404, 'not_found');
    expectProblem(await request(app).get('/Sessions/current').set('authorization', 'Bearer nope').set('accept', 'application/json'), 404, 'not_found');
  });

  it('answers a wrong method with 405 and an Allow header', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).delete('/users');
    expectProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD, POST'); // the operations /users has in the contract, and HEAD as GET is
  });

  it('answers a wrong content type with 415', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).post('/sessions').set('content-type', 'text/plain').send('email=a');
    expectProblem(res, 415, 'unsupported_media_type');
    expectContractResponse(res, 'POST', '/sessions');
  });

  it('answers validation failures with 400 naming each field', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).post('/sessions').send({ session: { email: 'a@b.co', password: 7 }, extra: true });
    expectProblem(res, 400, 'validation_failed');
    expectContractResponse(res, 'POST', '/sessions');
    const locations = res.body.errors.map((e: { location: string }) => e.location);
    expect(locations).toContain('request/body/session/password');
    expect(locations).toContain('request/body/extra');
  });

  it('refuses query keys the operation does not declare, brackets and all, with 400', async () => {
    const { app } = createTestApp(database.db);
    for (const query of ['%3D%5B=', '%5Bx%5D=1', 'role%5B%5D=admin', 'unknown=1']) {
      const res = await request(app).get(`/users?${query}`).set('x-api-key', 'bok_x');
      expectProblem(res, 400, 'validation_failed');
      expect(res.body.errors[0].location).toMatch(/^request\/query\//);
      expectContractResponse(res, 'GET', '/users');
    }
  });

  it('answers an unexpected failure with 500 internal_error and no internal detail', async () => {
    const { deps } = createTestApp(database.db);
    const handlers: HandlerMap = {
      ...createHandlers(buildServices(deps)),
      signIn: async () => {
        throw new Error('secret internal detail: connection string postgres://u:p@h/db');
      },
    };
    const { app, logs } = createTestApp(database.db, { handlers });
    const res = await request(app).post('/sessions').send({ session: { email: 'a@b.co', password: 'pw' } });
    expectProblem(res, 500, 'internal_error');
    expect(res.text).not.toContain('secret internal detail');
    expect(logs.text()).toContain('secret internal detail'); // the operator still sees it
  });

  it('answers missing credentials with 401 and a WWW-Authenticate challenge', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/users');
    expectProblem(res, 401, 'unauthenticated');
    expect(res.body.detail).toBe('This operation needs credentials: x-api-key or Authorization: Bearer <access_token>.');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="backoffice"');
    expectContractResponse(res, 'GET', '/users');
  });

  it('answers a request without credentials 401 before judging its parameters or body', async () => {
    const { app } = createTestApp(database.db);
    const badQuery = await request(app).get('/users?limit=none');
    expectProblem(badQuery, 401, 'unauthenticated');
    const badBody = await request(app).post('/users').send({ email: 'not an address', extra: true });
    expectProblem(badBody, 401, 'unauthenticated');
    expect(badBody.body.detail).toBe('This operation needs credentials: x-api-key or Authorization: Bearer <access_token>.');
    // An Authorization header of another scheme, or an empty x-api-key, is no credential either.
    expectProblem(await request(app).get('/users?limit=none').set('authorization', 'Basic dXNlcjpwYXNz'), 401, 'unauthenticated');
    expectProblem(await request(app).get('/users?limit=none').set('x-api-key', ''), 401, 'unauthenticated');
    // With one, the parameters are judged first: 400 before the credential is looked up.
    expectProblem(await request(app).get('/users?limit=none').set('x-api-key', 'bok_unknown'), 400, 'validation_failed');
  });

  it('answers refused credentials with 401 and error="invalid_token"', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/users').set('authorization', 'Bearer nope');
    expectProblem(res, 401, 'invalid_token');
    expect(res.headers['www-authenticate']).toBe('Bearer realm="backoffice", error="invalid_token"');
  });

  it('refuses both kinds of credentials at once with 400 ambiguous_credentials', async () => {
    const { app } = createTestApp(database.db);
    const res = await request(app).get('/users').set('authorization', 'Bearer a').set('x-api-key', 'b');
    expectProblem(res, 400, 'ambiguous_credentials');
  });
});

describe('request ids and security headers', () => {
  it("answers a request id of its own, whatever X-Request-Id a client sends (a trusted proxy's is test/request-id.test.ts)", async () => {
    const { app } = createTestApp(database.db);
    const sane = await request(app).get('/livez').set('x-request-id', 'abc-123');
    expect(sane.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const replaced = await request(app).get('/livez').set('x-request-id', 'bad id with spaces\u00e9');
    expect(replaced.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const none = await request(app).get('/livez');
    expect(none.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Set([sane, replaced, none].map((res) => res.headers['x-request-id'])).size).toBe(3);
  });

  it('sends the API’s security headers on every answer (a refusal, a success, every time), no document headers, and no X-Powered-By', async () => {
    const { app } = createTestApp(database.db);
    const answers = [await request(app).get('/users'), await request(app).get('/livez'), await request(app).get('/users'), await request(app).post('/sessions').send({})];
    for (const res of answers) {
      // OWASP's REST Security Cheat Sheet: what a JSON answer needs.
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d{8}; includeSubDomains$/);
      // helmet's headers for documents, which a JSON answer has no use for, are on pages only.
      for (const name of ['referrer-policy', 'cross-origin-opener-policy', 'origin-agent-cluster', 'x-dns-prefetch-control', 'x-xss-protection']) expect(res.headers[name], name).toBeUndefined();
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });

  it('sends helmet’s headers for documents on the pages (the back office, the reference), each with its own Content-Security-Policy', async () => {
    const { app } = createTestApp(database.db);
    // index.html asked for by name is served as a file, and is the same page.
    const pages = [await request(app).get('/').set('Accept', 'text/html'), await request(app).get('/index.html').set('Accept', 'text/html'), await request(app).get('/docs')];
    for (const res of pages) {
      expect(res.status).toBe(200);
      expect(res.type).toBe('text/html');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['strict-transport-security']).toMatch(/^max-age=\d{8}; includeSubDomains$/);
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(res.headers['cross-origin-resource-policy']).toBe('same-origin');
      expect(res.headers['origin-agent-cluster']).toBe('?1');
      expect(res.headers['x-dns-prefetch-control']).toBe('off');
      expect(res.headers['x-download-options']).toBe('noopen');
      expect(res.headers['x-permitted-cross-domain-policies']).toBe('none');
      expect(res.headers['x-xss-protection']).toBe('0');
      expect(res.headers['content-security-policy']).toMatch(/script-src 'self'/);
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(res.headers['content-security-policy']).not.toBe("default-src 'none'; frame-ancestors 'none'");
      expect(res.headers['x-powered-by']).toBeUndefined();
    }
  });
});

// The API's security headers (src/http/security-headers.ts).
const SECURITY_HEADERS = ['content-security-policy', 'strict-transport-security', 'x-content-type-options', 'x-frame-options'];
function expectSecurityHeaders(res: request.Response, what: string) {
  for (const name of SECURITY_HEADERS) expect(res.headers[name], `${what}: ${name}`).toBeDefined();
}

describe('security: security headers on every answer path', () => {
  it('404, 405, 401, 400, 415, HEAD, /openapi.json, /docs, /livez and the web app all carry the security headers', async () => {
    const { app } = createTestApp(database.db);
    const answers: [string, request.Test][] = [
      ['404', request(app).get('/nowhere').set('accept', 'application/json')],
      ['405', request(app).delete('/users')],
      ['401', request(app).get('/users')],
      ['400 malformed uri', request(app).get('/users/%E0%A4%A').set('authorization', 'Bearer nope')],
      ['415', request(app).post('/sessions').set('content-type', 'text/plain').send('x')],
      ['400 json', request(app).post('/sessions').set('content-type', 'application/json').send('{')],
      ['HEAD', request(app).head('/users')],
      ['openapi', request(app).get('/openapi.json')],
      ['docs', request(app).get('/docs')],
      ['livez', request(app).get('/livez')],
      ['OPTIONS livez', request(app).options('/livez')],
      ['page', request(app).get('/some/page').set('accept', 'text/html')],
    ];
    for (const [what, answer] of answers) expectSecurityHeaders(await answer, what);
  });
});
