// HEAD is answered wherever GET is, with the same status and headers and no body (RFC 9110):
// monitoring probes and link checkers use it, and a 405 would tell them the resource is broken.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** The headers that must agree between GET and HEAD (the rest name the request or the moment). */
const comparable = (headers: Record<string, string>) => {
  const { date: _date, 'x-request-id': _id, ...rest } = headers;
  return rest;
};

describe('HEAD', () => {
  it('answers wherever GET does, with the same status and headers and no body', async () => {
    const { app, logs } = createTestApp(database.db);
    const key = (await makeApiKey(database.db, ['users.list'])).secret;
    const user = await createUser(database.db);
    const { access_token } = await signIn(app, user.email, user.password);
    const cases: [string, Record<string, string>][] = [
      ['/users?limit=2', { 'x-api-key': key }],
      ['/utilisateurs', { 'x-api-key': key, 'x-api-inflection': 'camel' }],
      ['/me', { authorization: `Bearer ${access_token}` }],
      ['/users', {}],
      ['/roles', { 'x-api-key': key }],
      ['/livez', {}],
      ['/openapi.json', {}],
    ];
    for (const [path, headers] of cases) {
      const get = await request(app).get(path).set(headers);
      const head = await request(app).head(path).set(headers);
      expect(head.status, path).toBe(get.status);
      expect(comparable(head.headers), path).toEqual(comparable(get.headers));
      expect(head.text ?? '', path).toBe('');
    }
    const lines = logs.records().filter((r) => (r.req as { method?: string } | undefined)?.method === 'HEAD' && r.msg === 'request completed');
    expect(lines.length).toBe(cases.length);
  });
});
