// Roles: the built-in admin role is untouchable, names are unique case aside, nobody puts a
// permission they lack into a role, and what a user may do follows their roles on the next request.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { createTestDatabase, type TestDatabase, testPool } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { rolesOfUser } from '../src/roles/repository.js';
import { permissionsOfRoles } from '../src/roles/permissions.js';

let database: TestDatabase;
let adminId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
});
afterAll(() => database.destroy());

describe('roles', () => {
  it('lists admin with the whole catalogue; admin can be neither changed nor deleted', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const list = await request(app).get('/roles').set('authorization', auth);
    expect(list.status).toBe(200);
    expectContractResponse(list, 'GET', '/roles');
    const admin = list.body.data.find((r: { name: string }) => r.name === 'admin');
    expect(admin).toMatchObject({ built_in: true, permissions: [...PERMISSIONS] });
    const patch = await request(app).patch(`/roles/${admin.id}`).set('authorization', auth).send({ permissions: [] });
    expect(patch.status).toBe(409);
    expect(patch.body.code).toBe('role_built_in');
    expectContractResponse(patch, 'PATCH', `/roles/${admin.id}`);
    const del = await request(app).delete(`/roles/${admin.id}`).set('authorization', auth);
    expect(del.status).toBe(409);
    expect(permissionsOfRoles(await rolesOfUser(database.db, adminId)).size).toBe(PERMISSIONS.length);
  });

  it('creates, renames, changes and deletes a role; a duplicate name is 409 even when racing', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const auth = testBearer(adminId);
    const racing = await Promise.all(
      ['Support', 'support', 'SUPPORT'].map((name) => request(app).post('/roles').set('authorization', auth).send({ name, permissions: ['users.list'] })),
    );
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    const created = racing.find((r) => r.status === 201)!;
    expectContractResponse(created, 'POST', '/roles');
    const id = created.body.id as string;
    const changed = await request(app).patch(`/roles/${id}`).set('authorization', auth).send({ name: 'Helpdesk', permissions: ['users.list', 'users.read'] });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ name: 'Helpdesk', permissions: ['users.list', 'users.read'] });
    const gone = await request(app).delete(`/roles/${id}`).set('authorization', auth);
    expect(gone.status).toBe(204);
    expect((await request(app).delete(`/roles/${id}`).set('authorization', auth)).status).toBe(404);
  });

  // The CI run of 093d49b answered a PATCH 500 when a DELETE of the role came in between the
  // PATCH's commit and its reading of the answer (test/review-attacks.test.ts, "all of them at
  // once"). Here that moment is made certain: every time the service takes a connection, the hook
  // looks (on a connection of its own) whether the PATCH has committed, and deletes the role then.
  it('a role deleted the moment a PATCH of it commits: the PATCH answers the role as it left it, never 500', async () => {
    const role = await makeRole(database.db, ['tasks.list']);
    let deletedInBetween = false;
    const db = new Kysely<Database>({
      dialect: new PostgresDialect({
        pool: testPool({ connectionString: database.url, max: 2 }),
        onReserveConnection: async () => {
          if (deletedInBetween) return;
          const committed = await database.pool.query(`select 1 from role_permissions where role_id = $1 and permission = 'users.list'`, [role.id]);
          if (committed.rowCount === 0) return;
          await database.pool.query('delete from roles where id = $1', [role.id]);
          deletedInBetween = true;
        },
      }),
    });
    try {
      const { app } = createAppWithTestBearer(db);
      const res = await request(app).patch(`/roles/${role.id}`).set('authorization', testBearer(adminId)).send({ permissions: ['users.list'] });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ id: role.id, permissions: ['users.list'] });
      expectContractResponse(res, 'PATCH', `/roles/${role.id}`);
      // The hook does delete at the first connection taken after the commit: the next request's.
      expect((await request(app).get(`/roles/${role.id}`).set('authorization', testBearer(adminId))).status).toBe(404);
      expect(deletedInBetween).toBe(true);
    } finally {
      await db.destroy();
    }
  });

  it('refuses to put into a role a permission the caller lacks', async () => {
    const managerRole = await makeRole(database.db, ['roles.manage', 'users.list']);
    const manager = await makeUser(database.db, { roleIds: [managerRole.id] });
    const { app } = createAppWithTestBearer(database.db);
    const res = await request(app).post('/roles').set('authorization', testBearer(manager.id)).send({ name: 'Escalation', permissions: ['api_keys.manage'] });
    expect(res.status).toBe(403);
    expect(res.body.required_permission).toBe('api_keys.manage');
    expect(await database.db.selectFrom('roles').select('id').where('name', '=', 'Escalation').executeTakeFirst()).toBeUndefined();
  });

  it('lists the permission catalogue for any authenticated caller', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = await makeApiKey(database.db, ['tasks.list']);
    const res = await request(app).get('/permissions').set('x-api-key', key.secret);
    expect(res.status).toBe(200);
    expectContractResponse(res, 'GET', '/permissions');
    expect(res.body.data).toEqual([...PERMISSIONS]);
  });
});
