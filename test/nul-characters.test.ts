// A string holding U+0000 (which PostgreSQL text cannot store) is refused with 400 before anything
// runs, in a query parameter or anywhere in a JSON body; it once answered 500 (found by the fuzzer).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { makeApiKey } from './support/access-fixtures.js';
import { createUser, signIn } from './support/sessions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('the NUL character', () => {
  it('is refused with 400 in a query parameter that reaches the database', async () => {
    const { app } = createTestApp(database.db);
    const key = await makeApiKey(database.db, ['users.list']);
    for (const query of ['role=%00', 'search=a%00b']) {
      const res = await request(app).get(`/users?${query}`).set('x-api-key', key.secret);
      expect(res.status, query).toBe(400);
      expect(res.body.code).toBe('validation_failed');
      expect(res.body.errors[0].location).toBe(`request/query/${query.split('=')[0]}`);
      expectContractResponse(res, 'GET', '/users');
    }
    expect((await request(app).get('/users?search=ab').set('x-api-key', key.secret)).status).toBe(200);
  });

  it('is refused with 400 anywhere in a JSON body, and nothing is written', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { permissions: ['roles.manage'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    const res = await request(app).post('/roles').set('authorization', `Bearer ${access_token}`).send({ name: 'nul\u0000role', permissions: ['users.list'] });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].location).toBe('request/body/name');
    expectContractResponse(res, 'POST', '/roles');
    expect(await database.db.selectFrom('roles').select('id').where('name', 'like', 'nul%').execute()).toEqual([]);
    const signInWithNul = await request(app).post('/sessions').send({ session: { email: admin.email, password: `${admin.password}\u0000` } });
    expect(signInWithNul.status).toBe(400);
    expect(signInWithNul.body.errors[0].location).toBe('request/body/session/password');
  });
});
