// The real Prism on the contract: what frontend teams develop against (`make mock STYLE=...` runs
// scripts/mock.sh, as these tests do).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { spec } from './support/context.js';
import { startMock, type PrismProcess } from './support/prism.js';
import { bundlePath } from '../src/paths.js';

describe('Prism mock of the contract (snake_case, the default)', () => {
  let prism: PrismProcess;
  beforeAll(async () => {
    prism = await startMock('snake');
  });
  afterAll(() => prism?.stop());

  it('answers GET /users with the documented example when credentials are sent', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(res.status).toBe(200);
    const documented = spec.components.responses.UserPage.content['application/json'].example;
    expect(await res.json()).toEqual(documented);
  });

  it('answers GET /audit-events and GET /me/audit-events with the documented page of events', async () => {
    const documented = spec.components.responses.AuditEventPage.content['application/json'].example;
    const all = await fetch(`${prism.url}/audit-events?type=api_key_rotated`, { headers: { 'x-api-key': 'any-key', accept: 'application/json' } });
    expect(all.status).toBe(200);
    expect(await all.json()).toEqual(documented);
    const mine = await fetch(`${prism.url}/me/audit-events`, { headers: { authorization: 'Bearer any', accept: 'application/json' } });
    expect(await mine.json()).toEqual(documented);
  });

  it('answers the meetings of a week, and a meeting planned under the French path, with the documented examples', async () => {
    const page = await fetch(`${prism.url}/meetings?from=2026-12-14T00:00:00Z&until=2026-12-21T00:00:00Z&attendee_id=me`, { headers: { authorization: 'Bearer any', accept: 'application/json' } });
    expect(page.status).toBe(200);
    expect(await page.json()).toEqual(spec.components.responses.MeetingPage.content['application/json'].example);
    const planned = await fetch(`${prism.url}/reunions`, {
      method: 'POST',
      headers: { 'x-api-key': 'any', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ title: 'Revue', starts_at: '2026-12-15T09:00:00Z', ends_at: '2026-12-15T10:00:00Z', organizer_id: '0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90' }),
    });
    expect(planned.status).toBe(201);
    expect(await planned.json()).toEqual(spec.components.responses.MeetingCreated.content['application/json'].example);
    const unknown = await fetch(`${prism.url}/meetings/5a3e9c1d-7b2f-4e8a-9d6c-0f1b2a3c4d5e`, { headers: { 'x-api-key': 'any', prefer: 'code=404' } });
    expect(await unknown.json()).toMatchObject({ code: 'not_found', detail: 'No meeting has this id.' });
  });

  it('answers GET /tasks and /taches with the documented page, and POST /tasks with the documented task and its Location', async () => {
    const documented = spec.components.responses.TaskPage.content['application/json'].example;
    for (const path of ['/tasks?status=todo,in_progress&assignee_id=me', '/taches?sort=due_at']) {
      const res = await fetch(`${prism.url}${path}`, { headers: { 'x-api-key': 'any-key', accept: 'application/json' } });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual(documented);
    }
    const created = await fetch(`${prism.url}/tasks`, {
      method: 'POST',
      headers: { authorization: 'Bearer any', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ title: 'Call back the Lyon office' }),
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('location')).toMatch(/^\//);
    expect(await created.json()).toEqual(spec.components.responses.TaskCreated.content['application/json'].example);
  });

  it('answers GET /users with 401 without credentials', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { accept: 'application/json' } });
    expect(res.status).toBe(401);
  });

  it('answers POST /sessions with the documented token set', async () => {
    const res = await fetch(`${prism.url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ session: { email: 'ada@example.com', password: 'correct horse battery staple' } }),
    });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
  });

  it('serves the documented refusals of the authority rule on request (Prefer), for frontends to build against', async () => {
    const outranked = await fetch(`${prism.url}/api-keys/3f6d2b1e-8a47-4c9e-b2d5-7e1a0c4f9b68/rotate`, {
      method: 'POST',
      headers: { authorization: 'Bearer any', 'content-type': 'application/json', accept: 'application/problem+json', prefer: 'code=403, example=target_outranks_caller' },
      body: '{}',
    });
    expect(outranked.status).toBe(403);
    expect(await outranked.json()).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['roles.manage', 'users.create'] });
    const lastAdmin = await fetch(`${prism.url}/users/0b9e6a52-3c1f-4d8e-9a77-5f2c1e4b8d90`, { method: 'DELETE', headers: { 'x-api-key': 'any', accept: 'application/problem+json', prefer: 'code=409' } });
    expect(lastAdmin.status).toBe(409);
    expect(await lastAdmin.json()).toMatchObject({ code: 'last_admin' });
    const creatorDisabled = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any', accept: 'application/problem+json', prefer: 'code=401, example=api_key_creator_disabled' } });
    expect(creatorDisabled.status).toBe(401);
    expect(await creatorDisabled.json()).toMatchObject({ code: 'api_key_creator_disabled' });
  });
});

describe('Prism mock of the camelCase contract (make mock STYLE=camel)', () => {
  let prism: PrismProcess;
  const camel = JSON.parse(readFileSync(bundlePath('camel'), 'utf8'));
  beforeAll(async () => {
    prism = await startMock('camel');
  });
  afterAll(() => prism?.stop());

  it('answers GET /users with camelCase keys and the same values', async () => {
    const res = await fetch(`${prism.url}/users`, { headers: { 'x-api-key': 'any-key', 'x-api-inflection': 'camel', accept: 'application/json' } });
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
    // Prism answers the operation's documented 400 (its own 422 when none is documented).
    expect(res.status).toBe(400);
    expect(res.headers.get('sl-violations')).toMatch(/refreshToken/);
  });
});

it('make mock refuses an unknown style', async () => {
  await expect(startMock('kebab' as never)).rejects.toThrow(/STYLE must be one of camel, dash, snake, pascal/);
});
