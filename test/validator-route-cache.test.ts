// express-openapi-validator 5.6.2 compiled a path-to-regexp matcher for every route it scanned on
// every request; patches/express-openapi-validator+5.6.2.patch (upstream pull request #1217, applied
// by patch-package at npm install) compiles each once. Requests after the first compile nothing.
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';

const requireFromValidator = createRequire(createRequire(import.meta.url).resolve('express-openapi-validator'));
const pathToRegexpModule = requireFromValidator('path-to-regexp') as { pathToRegexp: (...args: unknown[]) => unknown };

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('contract validator route lookup', () => {
  it('compiles no route matcher after the first request', async () => {
    const original = pathToRegexpModule.pathToRegexp;
    let compiled = 0;
    pathToRegexpModule.pathToRegexp = (...args: unknown[]) => {
      compiled += 1;
      return original(...args);
    };
    try {
      const { app } = createTestApp(database.db);
      const paths = ['/users', '/me', '/sessions', '/api-keys', '/roles', '/permissions'];
      // A credential (refused later, by authentication): without one, the request is answered
      // before it reaches the validator (src/http/authenticate.ts, requireCredentials).
      const get = (path: string) => request(app).get(path).set('authorization', 'Bearer nope');
      for (const path of paths) expect((await get(path)).status).toBe(401);
      const afterFirst = compiled;
      expect(afterFirst).toBeGreaterThan(0); // the validator does use this module
      for (let i = 0; i < 3; i++) for (const path of paths) expect((await get(path)).status).toBe(401);
      expect(compiled).toBe(afterFirst);
    } finally {
      pathToRegexpModule.pathToRegexp = original;
    }
  });
});
