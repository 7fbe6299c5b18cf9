// express-openapi-validator compiles its checks per operation and request content type, and keeps
// them. Content types an attacker varies at will must not each add a compiled entry: that would
// grow the process's memory, and spend CPU compiling, without bound (src/contract/validator.ts).
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';

const requireFromHere = createRequire(import.meta.url);
const { RequestValidator } = requireFromHere('express-openapi-validator/dist/middlewares/openapi.request.validator.js') as {
  RequestValidator: { prototype: { buildMiddleware: (...args: unknown[]) => unknown } };
};

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('the contract validator’s compiled checks', () => {
  it('an attacker varying the Content-Type’s parameters, or sending one where no body is taken, cannot make it compile and keep a new entry per request', async () => {
    const original = RequestValidator.prototype.buildMiddleware;
    let built = 0;
    RequestValidator.prototype.buildMiddleware = function (...args: unknown[]) {
      built += 1;
      return original.apply(this, args);
    };
    try {
      const { app } = createTestApp(database.db);
      for (let i = 0; i < 25; i++) {
        const signIn = await request(app)
          .post('/sessions')
          .set('content-type', `application/json; x-nonce=${i}`)
          .send(JSON.stringify({ session: { email: `nobody${i}@example.com`, password: 'not the password at all' } }));
        expect(signIn.status).toBe(401);
        const list = await request(app).get('/users').set('authorization', 'Bearer nope').set('content-type', `text/x-nonce-${i}`);
        expect(list.status).toBe(401);
      }
      expect(built).toBeLessThanOrEqual(2); // one per operation and media type
    } finally {
      RequestValidator.prototype.buildMiddleware = original;
    }
  });
});
