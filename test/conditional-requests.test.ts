// ETag, If-Match and If-None-Match on users, roles, API keys, tasks, meetings and webhook endpoints,
// tried as two people editing the same record would: a stale tag changes nothing, two racing
// changes with one tag make one change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeRole, makeUser, makeWebhookEndpoint, testBearer } from './support/access-fixtures.js';
import { secondInstance } from './support/second-instance.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
let adminId: string;
let auth: string;
beforeAll(async () => {
  database = await createTestDatabase();
  adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
  auth = testBearer(adminId);
});
afterAll(() => database.destroy());

const auditCount = async () => Number((await database.db.selectFrom('security_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

/** Each changeable resource: how to make one, read it, change it and delete it. */
let changes = 0;
const resources = {
  user: {
    make: async () => `/users/${(await makeUser(database.db)).id}`,
    change: () => ({ first_name: `Changed ${++changes}` }),
  },
  role: {
    make: async () => `/roles/${(await makeRole(database.db, ['users.list'])).id}`,
    change: () => ({ description: `Changed ${++changes}` }),
  },
  'api key': {
    make: async () => `/api-keys/${(await makeApiKey(database.db, ['users.list'])).id}`,
    change: () => ({ name: `changed-${++changes}-${Date.now()}` }),
  },
  task: {
    make: async () => {
      const { app } = createAppWithTestBearer(database.db);
      return `/tasks/${(await request(app).post('/tasks').set('authorization', auth).send({ title: 'Call back' })).body.id}`;
    },
    change: () => ({ title: `Changed ${++changes}` }),
  },
  meeting: {
    make: async () => {
      const { app } = createAppWithTestBearer(database.db);
      const startsAt = new Date(Date.now() + 86_400_000);
      const body = { title: 'Weekly', starts_at: startsAt.toISOString(), ends_at: new Date(startsAt.getTime() + 3_600_000).toISOString() };
      return `/meetings/${(await request(app).post('/meetings').set('authorization', auth).send(body)).body.id}`;
    },
    change: () => ({ title: `Changed ${++changes}` }),
  },
  'webhook endpoint': {
    make: async () => `/webhook-endpoints/${(await makeWebhookEndpoint(database.db)).id}`,
    change: () => ({ description: `Changed ${++changes}` }),
  },
};

describe('conditional requests', () => {
  for (const [kind, resource] of Object.entries(resources)) {
    it(`a ${kind}: GET answers an ETag, If-None-Match answers 304, a stale If-Match on PATCH and DELETE answers 412 and changes nothing`, async () => {
      const { app } = createAppWithTestBearer(database.db);
      const path = await resource.make();
      const read = await request(app).get(path).set('authorization', auth);
      expect(read.status).toBe(200);
      const tag = read.headers.etag as string;
      expect(tag).toMatch(/^"[!#-~]+"$/);
      expectContractResponse(read, 'GET', path);

      const unchanged = await request(app).get(path).set('authorization', auth).set('if-none-match', tag);
      expect(unchanged.status).toBe(304);
      expect(unchanged.text).toBe('');
      expect(unchanged.headers.etag).toBe(tag);

      // Someone else changes it (no If-Match: the write goes through, as before).
      const other = await request(app).patch(path).set('authorization', auth).send(resource.change());
      expect(other.status).toBe(200);
      expect(other.headers.etag).not.toBe(tag);
      const current = await request(app).get(path).set('authorization', auth);
      expect(current.headers.etag).toBe(other.headers.etag);
      expect((await request(app).get(path).set('authorization', auth).set('if-none-match', tag)).status).toBe(200);

      const before = await auditCount();
      const stalePatch = await request(app).patch(path).set('authorization', auth).set('if-match', tag).send(resource.change());
      expect(stalePatch.status).toBe(412);
      expect(stalePatch.body.code).toBe('precondition_failed');
      expect(stalePatch.headers['content-type']).toMatch(/^application\/problem\+json/);
      expectContractResponse(stalePatch, 'PATCH', path);
      const staleDelete = await request(app).delete(path).set('authorization', auth).set('if-match', tag);
      expect(staleDelete.status).toBe(412);
      expectContractResponse(staleDelete, 'DELETE', path);
      const after = await request(app).get(path).set('authorization', auth);
      expect(after.text).toBe(current.text);
      expect(after.headers.etag).toBe(current.headers.etag);
      expect(await auditCount()).toBe(before);

      // The current tag lets the change through, and its answer carries the next tag.
      const fresh = await request(app).patch(path).set('authorization', auth).set('if-match', current.headers.etag as string).send(resource.change());
      expect(fresh.status).toBe(200);
      expect(fresh.headers.etag).not.toBe(current.headers.etag);
      expect((await request(app).delete(path).set('authorization', auth).set('if-match', fresh.headers.etag as string)).status).toBeLessThan(300);
    });
  }

  it('tags differ per key style, and a tag is only good with the style it was answered in', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const path = `/users/${(await makeUser(database.db)).id}`;
    const snake = await request(app).get(path).set('authorization', auth);
    const camel = await request(app).get(path).set('authorization', auth).set('x-api-inflection', 'camel');
    expect(camel.headers.etag).not.toBe(snake.headers.etag);
    expect((await request(app).get(path).set('authorization', auth).set('x-api-inflection', 'camel').set('if-none-match', camel.headers.etag as string)).status).toBe(304);
    const mixed = await request(app).patch(path).set('authorization', auth).set('x-api-inflection', 'camel').set('if-match', snake.headers.etag as string).send({ firstName: 'Mixed' });
    expect(mixed.status).toBe(412);
    expect(mixed.body.requestId).toBeTypeOf('string');
    const right = await request(app).patch(path).set('authorization', auth).set('x-api-inflection', 'camel').set('if-match', camel.headers.etag as string).send({ firstName: 'Right' });
    expect(right.status).toBe(200);
  });

  it('If-Match compares strongly (a weak tag never matches), takes a list, and * matches any version', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const path = `/users/${(await makeUser(database.db)).id}`;
    const tag = (await request(app).get(path).set('authorization', auth)).headers.etag as string;
    expect((await request(app).patch(path).set('authorization', auth).set('if-match', `W/${tag}`).send({ first_name: 'Weak' })).status).toBe(412);
    expect((await request(app).patch(path).set('authorization', auth).set('if-match', `"other", ${tag}`).send({ first_name: 'Listed' })).status).toBe(200);
    expect((await request(app).patch(path).set('authorization', auth).set('if-match', '*').send({ first_name: 'Any' })).status).toBe(200);
    const malformed = await request(app).patch(path).set('authorization', auth).set('if-match', 'no-quotes').send({ first_name: 'Bad' });
    expect(malformed.status).toBe(400);
    // W/ in If-None-Match compares weakly: the same opaque tag is current.
    expect((await request(app).get(path).set('authorization', auth).set('if-none-match', `W/${tag.replace(/^"/, '"x')}`)).status).toBe(200);
  });

  it("a user's tag changes when a role it holds is renamed, and when that role is deleted", async () => {
    const { app } = createAppWithTestBearer(database.db);
    const role = await makeRole(database.db, ['users.list']);
    const path = `/users/${(await makeUser(database.db, { roleIds: [role.id] })).id}`;
    const first = (await request(app).get(path).set('authorization', auth)).headers.etag;
    expect((await request(app).patch(`/roles/${role.id}`).set('authorization', auth).send({ name: `${role.name}-renamed` })).status).toBe(200);
    const renamed = (await request(app).get(path).set('authorization', auth)).headers.etag;
    expect(renamed).not.toBe(first);
    expect((await request(app).delete(`/roles/${role.id}`).set('authorization', auth)).status).toBe(204);
    const gone = (await request(app).get(path).set('authorization', auth)).headers.etag;
    expect(new Set([first, renamed, gone]).size).toBe(3);
  });

  for (const [kind, resource] of Object.entries(resources)) {
    it(`two concurrent PATCHes of a ${kind} with the same If-Match, through two service instances: one change, one 412`, async () => {
      const clock = new ManualClock(new Date());
      const { app } = createAppWithTestBearer(database.db, clock);
      const second = await secondInstance(database.url, { clock });
      try {
        const apiKey = await makeApiKey(database.db, ['users.list', 'users.read', 'users.update', 'roles.manage', 'tasks.read', 'tasks.update', 'meetings.read', 'meetings.update', 'webhooks.manage']);
        const path = await resource.make();
        // API keys are managed by signed-in users only: both instances then take the test bearer.
        const as = (r: request.Test) => (kind === 'api key' ? r.set('authorization', auth) : r.set('x-api-key', apiKey.secret));
        const secondApp = kind === 'api key' ? createAppWithTestBearer(second.db, clock).app : second.app;
        const tag = (await as(request(app).get(path))).headers.etag as string;
        const change = (target: typeof app) => as(request(target).patch(path)).set('if-match', tag).send(resource.change());
        const answers = await Promise.all([change(app), change(secondApp)]);
        expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
        const winner = answers.find((a) => a.status === 200)!;
        expect((await as(request(app).get(path))).text).toBe(winner.text);
      } finally {
        await second.close();
      }
    });
  }
});
