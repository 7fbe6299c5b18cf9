// The real Prism on the contract: what frontend teams develop against (`make mock STYLE=...` runs
// scripts/mock.sh, as these tests do). One mock answers every key style, by x-api-inflection as the
// service does; it is started once for the file (Prism is slow to start), with STYLE=camel, so that
// what a request without the header gets is seen to be STYLE's style. The comparison of every
// operation with the service: test/mock-differential.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { spec } from './support/context.js';
import { startMock, type PrismProcess } from './support/prism.js';
import { budget } from './support/budgets.js';
import { bundlePath } from '../src/paths.js';

let prism: PrismProcess;
beforeAll(async () => {
  prism = await startMock('camel');
}, budget({ mockStart: 1 }));
afterAll(() => prism?.stop());

/** A snake_case client: sends the header with every request, as the service's clients may. */
const snake = { 'x-api-inflection': 'snake' };

describe('the mock of the snake_case contract (x-api-inflection: snake)', () => {
  it('answers GET /users with the documented example when credentials are sent', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { ...snake, 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(res.status).toBe(200);
    const documented = spec.components.responses.UserPage.content['application/json'].example;
    expect(await res.json()).toEqual(documented);
  });

  it('answers GET /audit-events and GET /me/audit-events with the documented page of events', async () => {
    const documented = spec.components.responses.AuditEventPage.content['application/json'].example;
    const all = await fetch(`${prism.url}/audit-events?type=api_key_rotated`, { headers: { ...snake, 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual(documented);
    const mine = await fetch(`${prism.url}/me/audit-events`, { headers: { ...snake, authorization: 'Bearer any', accept: 'application/json' } });
    expect(await mine.json()).toEqual(documented);
  });

  it('answers the meetings of a week, and a meeting planned under the French path, with the documented examples', async () => {
    const page = await fetch(`${prism.url}/meetings?from=2026-12-14T00:00:00Z&until=2026-12-21T00:00:00Z&attendee_id=me`, { headers: { ...snake, authorization: 'Bearer any', accept: 'application/json' } });
    expect(page.status).toBe(200);
    expect(await page.json()).toEqual(spec.components.responses.MeetingPage.content['application/json'].example);
    const planned = await fetch(`${prism.url}/reunions`, {
      method: 'POST',
      headers: { ...snake, 'x-api-key': 'any', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ title: 'Revue', starts_at: '2026-12-15T09:00:00Z', ends_at: '2026-12-15T10:00:00Z', organizer_id: '0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90' }),
    });
    expect(planned.status).toBe(201);
    expect(await planned.json()).toEqual(spec.components.responses.MeetingCreated.content['application/json'].example);
    const unknown = await fetch(`${prism.url}/meetings/5a3e9c1d-7b2f-4e8a-9d6c-0f1b2a3c4d5e`, { headers: { ...snake, 'x-api-key': 'any', prefer: 'code=404' } });
    expect(await unknown.json()).toMatchObject({ code: 'not_found', detail: 'No meeting has this id.' });
  });

  it('answers GET /tasks and /taches with the documented page, and POST /tasks with the documented task and its Location', async () => {
    const documented = spec.components.responses.TaskPage.content['application/json'].example;
    for (const path of ['/tasks?status=todo,in_progress&assignee_id=me', '/taches?sort=due_at']) {
      const res = await fetch(`${prism.url}${path}`, { headers: { ...snake, 'x-api-key': 'any-key', accept: 'application/json' } });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual(documented);
    }
    const created = await fetch(`${prism.url}/tasks`, {
      method: 'POST',
      headers: { ...snake, authorization: 'Bearer any', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ title: 'Call back the Lyon office' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toMatch(/^\//);
    expect(await created.json()).toEqual(spec.components.responses.TaskCreated.content['application/json'].example);
  });

  it('answers GET /users with 401 without credentials', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { ...snake, accept: 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('answers POST /sessions with the documented token set', async () => {
    const res = await fetch(`${prism.url}/sessions`, {
      method: 'POST',
      headers: { ...snake, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ session: { email: 'ada@example.com', password: 'correct horse battery staple' } }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
  });

  it('serves the documented refusals of the authority rule on request (Prefer), for frontends to build against', async () => {
    const outranked = await fetch(`${prism.url}/api-keys/3f6d2b1e-8a47-4c9e-b2d5-7e1a0c4f9b68/rotate`, {
      method: 'POST',
      headers: { ...snake, authorization: 'Bearer any', 'content-type': 'application/json', accept: 'application/problem+json', prefer: 'code=403, example=target_outranks_caller' },
      body: '{}',
    });
    expect(outranked.status).toBe(403);
    expect(await outranked.json()).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['roles.manage', 'users.create'] });
    const lastAdmin = await fetch(`${prism.url}/users/0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90`, { method: 'DELETE', headers: { ...snake, 'x-api-key': 'any', accept: 'application/problem+json', prefer: 'code=409' } });
    expect(lastAdmin.status).toBe(409);
    expect(await lastAdmin.json()).toMatchObject({ code: 'last_admin' });
    const creatorDisabled = await fetch(`${prism.url}/users`, { headers: { ...snake, 'x-api-key': 'any', accept: 'application/problem+json', prefer: 'code=401, example=api_key_creator_disabled' } });
    expect(creatorDisabled.status).toBe(401);
    expect(await creatorDisabled.json()).toMatchObject({ code: 'api_key_creator_disabled' });
  });
});

describe('the mock of the camelCase contract (STYLE=camel: no header, or x-api-inflection: camel)', () => {
  const camel = JSON.parse(readFileSync(bundlePath('camel'), 'utf8'));

  it('answers GET /users without the header in STYLE (camelCase keys, the same values)', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { data: Record<string, unknown>[] };
    expect(body).toEqual(camel.components.responses.UserPage.content['application/json'].example);
    expect(Object.keys(body)).toEqual(['data', 'nextCursor']);
    expect(body.data[0]).toMatchObject({ firstName: 'Ada', lastName: 'Lovelace', lastSignInAt: '2026-11-20T08:15:00.000Z' });
    expect(JSON.stringify(body)).not.toMatch(/"[a-z]+_[a-z_]+":/);
  });

  it('takes a camelCase request body and answers the token set in camelCase', async () => {
    const res = await fetch(`${prism.url}/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer any', 'x-api-inflection': 'camel' },
      body: JSON.stringify({ refreshToken: 'bor_any' }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ tokenType: 'Bearer', expiresIn: 600, accessToken: expect.any(String), refreshToken: expect.any(String) });
  });

  it('answers its documented problems in camelCase', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any-key', 'x-api-inflection': 'camel', prefer: 'code=403' } });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ requestId: expect.any(String), requiredPermission: 'users.list' });
  });

  it('refuses a snake_case request body: the camelCase contract declares camelCase keys only', async () => {
    const res = await fetch(`${prism.url}/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer any', 'x-api-inflection': 'camel' },
      body: JSON.stringify({ refresh_token: 'bor_any' }),
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('sl-violations')).toMatch(/refreshToken/);
  });
});

describe('one mock, every key style, as the service answers them', () => {
  it('answers each request in the style its x-api-inflection asks for, read as the service reads it', async () => {
    const keysOf = async (style: string) => {
      const res = await fetch(`${prism.url}/me`, { headers: { authorization: 'Bearer any', 'x-api-inflection': style } });
      expect(res.status, style).toBe(200);
      const body = (await res.json()) as Record<string, Record<string, unknown>>;
      return Object.keys(Object.values(body)[0]!);
    };
    expect(await keysOf('snake')).toContain('first_name');
    expect(await keysOf('camel')).toContain('firstName');
    expect(await keysOf('dash')).toContain('first-name');
    expect(await keysOf('pascal')).toContain('FirstName');
    // Any letter case, blanks around: the service's own reading (src/http/inflection.ts).
    expect(await keysOf(' PASCAL ')).toContain('FirstName');
  });

  it('answers an unknown x-api-inflection as the service does: 400 invalid_inflection, listing the four', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any', 'x-api-inflection': 'kebab' } });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ code: 'invalid_inflection', request_id: expect.any(String), allowed_values: ['camel', 'dash', 'snake', 'pascal'] });
  });

  it('answers a create with a bad body 400 validation_failed, not the 422 of a reused Idempotency-Key', async () => {
    const post = (path: string, body: unknown, style: string) =>
      fetch(`${prism.url}${path}`, { method: 'POST', headers: { 'x-api-key': 'any', 'content-type': 'application/json', 'x-api-inflection': style }, body: JSON.stringify(body) });
    for (const style of ['snake', 'camel']) {
      for (const [path, body] of [['/tasks', {}], ['/users', { email: 'nope' }]] as const) {
        const res = await post(path, body, style);
        expect(res.status, `${style} POST ${path}`).toBe(400);
        expect(await res.json(), `${style} POST ${path}`).toMatchObject({ code: 'validation_failed' });
      }
    }
    // The reused key's answer is still there for a team to build against, on request.
    const reused = await fetch(`${prism.url}/tasks`, {
      method: 'POST',
      headers: { 'x-api-key': 'any', 'content-type': 'application/json', 'x-api-inflection': 'snake', prefer: 'code=422' },
      body: JSON.stringify({ title: 'Call back the Lyon office' }),
    });
    expect(reused.status).toBe(422);
    expect(await reused.json()).toMatchObject({ code: 'idempotency_key_reused' });
  });

  it('answers a request without any credential 401 unauthenticated, and an unknown query parameter 400, as the service does', async () => {
    const anonymous = await fetch(`${prism.url}/users`, { headers: { 'x-api-inflection': 'snake' } });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'unauthenticated' });
    // The service refuses an undeclared query parameter before it asks for credentials.
    const unknown = await fetch(`${prism.url}/users?colour=blue`, { headers: { 'x-api-inflection': 'snake' } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: 'validation_failed' });
  });
});

it('make mock refuses an unknown style', async () => {
  await expect(startMock('kebab' as never)).rejects.toThrow(/STYLE must be one of camel, dash, snake, pascal/);
});
