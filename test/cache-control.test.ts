// A shared cache (or the browser's disk) must not keep what one caller was shown: every answer of
// the API says Cache-Control: no-store, successes and refusals alike, besides Vary: x-api-inflection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { makeApiKey } from './support/access-fixtures.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('caching of personal data', () => {
  it("a shared cache is told to keep none of a caller's answers, successes or refusals", async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    const bearer = `Bearer ${access_token}`;
    const key = (await makeApiKey(database.db, ['users.list'])).secret;
    const answers = [
      await request(app).get('/users').set('x-api-key', key),
      await request(app).get('/utilisateurs').set('x-api-key', key).set('x-api-inflection', 'camel'),
      await request(app).get(`/users/${admin.id}`).set('authorization', bearer),
      await request(app).get('/me').set('authorization', bearer),
      await request(app).get('/sessions').set('authorization', bearer),
      await request(app).get('/roles').set('authorization', bearer),
      await request(app).get('/api-keys').set('authorization', bearer),
      await request(app).get('/permissions').set('authorization', bearer),
      await request(app).get(`/users/${admin.id}/sessions`).set('authorization', bearer),
      // refusals
      await request(app).get('/users'),
      await request(app).get('/users').set('x-api-key', 'bok_not_a_key'),
      await request(app).get('/roles').set('x-api-key', key),
      await request(app).get('/users/00000000-0000-4000-8000-000000000000').set('authorization', bearer),
      await request(app).get('/users').set('x-api-key', key).set('x-api-inflection', 'kebab'),
      await request(app).get('/nothing-here').set('accept', 'application/json'),
    ];
    for (const [index, res] of answers.entries()) {
      const what = `answer ${index} (${res.status})`;
      expect(res.headers['cache-control'], what).toBe('no-store');
      expect(res.headers.vary, what).toMatch(/x-api-inflection/i);
    }
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 401, 401, 403, 404, 400, 404]);
  });
});
