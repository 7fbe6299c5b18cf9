// A release that changes the permission catalogue changes what the admin role and other roles show
// without a write to any row: their entity tags must change with it, or a client's If-None-Match
// keeps answering 304 on the old list and its If-Match passes on a stale view. The other release is
// the same service loaded again with one permission fewer in its catalogue.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { adminRoleId, createAppWithTestBearer, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** The service of a release whose catalogue lacks `dropped`. */
async function releaseWithout(dropped: string) {
  vi.resetModules();
  vi.doMock('../src/auth/permissions.js', async (original) => {
    const actual = await original<typeof import('../src/auth/permissions.js')>();
    return { ...actual, PERMISSIONS: actual.PERMISSIONS.filter((p) => p !== dropped) };
  });
  const fixtures = await import('./support/access-fixtures.js');
  vi.doUnmock('../src/auth/permissions.js');
  return fixtures.createAppWithTestBearer(database.db).app;
}

describe('entity tags across a release', () => {
  it('a release that drops a permission from the catalogue changes the tags of the admin role and of a role holding it, so a stale If-Match fails', async () => {
    const adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
    const role = await makeRole(database.db, ['users.list', 'meetings.delete']);
    const paths = [`/roles/${ADMIN_ROLE_ID}`, `/roles/${role.id}`];
    // Read with this release first: loading the other one replaces the modules this one runs on.
    const before = createAppWithTestBearer(database.db).app;
    const old = [];
    for (const path of paths) old.push(await request(before).get(path).set('authorization', testBearer(adminId)));
    const after = await releaseWithout('meetings.delete');
    for (const [i, path] of paths.entries()) {
      const now = await request(after).get(path).set('authorization', testBearer(adminId));
      expect(old[i]!.status).toBe(200);
      expect(now.status, `${path} ${now.text}`).toBe(200);
      expect(now.text).not.toBe(old[i]!.text);
      expect(now.headers.etag).not.toBe(old[i]!.headers.etag);
      expect((await request(after).get(path).set('authorization', testBearer(adminId)).set('if-none-match', old[i]!.headers.etag as string)).status).toBe(200);
      const stale = request(after).patch(path).set('authorization', testBearer(adminId)).set('if-match', old[i]!.headers.etag as string);
      expect((await stale.send({ description: 'stale view' })).status).toBe(412);
    }
  });
});
