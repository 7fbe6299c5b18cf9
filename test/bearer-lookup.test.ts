// The bearer lookup's SQL (src/auth/sessions/repository.ts bearerSession, src/auth/sessions/liveness.ts)
// is written for PostgreSQL's CPU: the admin role answers "every permission" as the mark `*`,
// and the liveness rule sends `now` once. These tests hold both to what they replaced.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { sessionIsLive } from '../src/auth/sessions/liveness.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { roleRow } from './support/rows.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

describe('the bearer lookup: permissions from the current roles', () => {
  it('a user without a role, or whose roles give nothing, is not taken for an administrator', async () => {
    const { app } = createTestApp(database.db);
    const roleless = await createUser(database.db);
    const emptyRole = await createUser(database.db);
    const role = await database.db.insertInto('roles').values(roleRow({ name: `empty-${emptyRole.id}` })).returning('id').executeTakeFirstOrThrow();
    await database.db.insertInto('user_roles').values({ user_id: emptyRole.id, role_id: role.id }).execute();
    for (const user of [roleless, emptyRole]) {
      const { access_token } = await signIn(app, user.email, user.password);
      const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
      expect(me.body.permissions, user.email).toEqual([]);
      await request(app).get('/users').set('authorization', `Bearer ${access_token}`).expect(403);
    }
  });

  it('an administrator who holds other roles too has every permission; losing the admin role leaves the others', async () => {
    const { app } = createTestApp(database.db);
    const user = await createUser(database.db, { roles: ['admin'], permissions: ['users.list'] });
    const { access_token } = await signIn(app, user.email, user.password);
    const me = () => request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
    expect([...(await me()).body.permissions].sort()).toEqual([...PERMISSIONS].sort());
    await sql`delete from user_roles where user_id = ${user.id} and role_id = (select id from roles where built_in and name = 'admin')`.execute(database.db);
    expect((await me()).body.permissions).toEqual(['users.list']);
  });

  it('a role cannot be given the mark that stands for every permission: the database refuses it, so no one but an administrator is taken for one', async () => {
    const role = await database.db.insertInto('roles').values(roleRow({ name: `mark-${Date.now()}` })).returning('id').executeTakeFirstOrThrow();
    for (const permission of ['*', '', 'users', 'users.list ', 'Users.List']) {
      await expect(database.db.insertInto('role_permissions').values({ role_id: role.id, permission }).execute(), JSON.stringify(permission)).rejects.toThrow(/role_permissions_permission_name/);
    }
    await database.db.insertInto('role_permissions').values({ role_id: role.id, permission: 'api_keys.manage' }).execute();
  });
});

describe('the liveness rule', () => {
  it('a session is live until the first of: signed out, revoked, its expiry, its idle timeout (each end at the instant itself)', async () => {
    const now = new Date('2026-06-01T10:00:00.000Z');
    const idleCutoff = new Date('2026-05-25T10:00:00.000Z');
    const at = (ms: number) => new Date(now.getTime() + ms);
    const user = await createUser(database.db);
    // Every end before, at and after `now` (and none), and the last use before, at and after the cutoff.
    const ends = [null, at(-1), at(0), at(1)];
    const cases = [];
    for (const ended_at of ends)
      for (const revoked_at of ends)
        for (const expires_at of [at(-1), at(0), at(1), at(86_400_000)])
          for (const last_used_at of [new Date(idleCutoff.getTime() - 1), idleCutoff, new Date(idleCutoff.getTime() + 1)])
            cases.push({ ended_at, revoked_at, expires_at, last_used_at });
    const rows = await database.db
      .insertInto('sessions')
      .values(cases.map((c) => ({ ...c, user_id: user.id, ip_address: '127.0.0.1', user_agent: 'liveness', created_at: at(-86_400_000) })))
      .returning('id')
      .execute();
    const live = new Set(
      (await database.db.selectFrom('sessions').select('id').where('user_agent', '=', 'liveness').where(sessionIsLive('sessions', { now, idleCutoff })).execute()).map((r) => r.id),
    );
    // The rule as docs/AUTH.md states it, one end at a time.
    const expected = cases.map(
      (c) => (c.ended_at === null || c.ended_at > now) && (c.revoked_at === null || c.revoked_at > now) && c.expires_at > now && c.last_used_at > idleCutoff,
    );
    expect(rows.map((r) => live.has(r.id))).toEqual(expected);
    expect(expected.filter(Boolean).length).toBeGreaterThan(0);
  });
});

describe('security: the bearer lookup’s admin mark', () => {
  it('a role named "admin" that is not the built-in one grants only its own permissions; renaming the built-in role changes nothing', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminToken = (await signIn(app, admin.email, admin.password)).access_token;
    // Through the API: making or renaming a role "admin" or "Admin", or giving it the mark.
    for (const name of ['admin', 'Admin', 'admin ']) {
      const res = await request(app).post('/roles').set('authorization', `Bearer ${adminToken}`).send({ role: { name, permissions: ['users.list'] } });
      expect([400, 409], name).toContain(res.status);
    }
    const star = await request(app).post('/roles').set('authorization', `Bearer ${adminToken}`).send({ role: { name: 'star', permissions: ['*'] } });
    expect(star.status).toBe(400);
    // Straight in the database: the built-in role renamed, and a role named "admin" that is not built in.
    const user = await createUser(database.db);
    await sql`update roles set name = 'admin-was-built-in', name_key = 'admin-was-built-in' where id = ${ADMIN_ROLE_ID}`.execute(database.db);
    let access_token: string;
    try {
      const fake = await database.db.insertInto('roles').values(roleRow({ name: 'admin' })).returning('id').executeTakeFirstOrThrow();
      await database.db.insertInto('role_permissions').values({ role_id: fake.id, permission: 'users.list' }).execute();
      await database.db.insertInto('user_roles').values({ user_id: user.id, role_id: fake.id }).execute();
      access_token = (await signIn(app, user.email, user.password)).access_token;
      const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
      expect(me.body.permissions).toEqual(['users.list']);
      // What makes the admin role is its id, not its name: its holders keep every right.
      await request(app).get('/roles').set('authorization', `Bearer ${adminToken}`).expect(200);
      const adminMe = await request(app).get('/me').set('authorization', `Bearer ${adminToken}`).expect(200);
      expect([...adminMe.body.permissions].sort()).toEqual([...PERMISSIONS].sort());
    } finally {
      await sql`delete from roles where name = 'admin' and not built_in`.execute(database.db);
      await sql`update roles set name = 'admin', name_key = 'admin' where id = ${ADMIN_ROLE_ID}`.execute(database.db);
    }
    await request(app).get('/roles').set('authorization', `Bearer ${access_token}`).expect(403);
  });

  it('forging an admin role in the database is refused: a second built-in role, the flag on another role, or the admin role moved to another id', async () => {
    const other = await database.db.insertInto('roles').values(roleRow({ name: `other-${Date.now()}` })).returning('id').executeTakeFirstOrThrow();
    // Each forgery carries the second-factor flag the admin role must hold, so it meets the check it attacks.
    const forgeries = [
      sql`insert into roles (name, name_key, built_in, requires_second_factor) values ('second admin', 'second admin', true, true)`,
      sql`update roles set built_in = true, requires_second_factor = true where id = ${other.id}`,
      sql`update roles set id = gen_random_uuid() where id = ${ADMIN_ROLE_ID}`,
      sql`update roles set built_in = false where id = ${ADMIN_ROLE_ID}`,
    ];
    for (const forgery of forgeries) {
      await expect(forgery.execute(database.db)).rejects.toMatchObject({ code: '23514', constraint: 'roles_built_in_is_admin' });
    }
    // And the admin role cannot be freed of its second factor.
    await expect(sql`update roles set requires_second_factor = false where id = ${ADMIN_ROLE_ID}`.execute(database.db)).rejects.toMatchObject({ code: '23514', constraint: 'roles_admin_requires_second_factor' });
    const builtIn = await database.db.selectFrom('roles').select(['id', 'name']).where('built_in', '=', true).execute();
    expect(builtIn).toEqual([{ id: ADMIN_ROLE_ID, name: 'admin' }]);
  });

  it('an administrator who is disabled gets nothing from the mark', async () => {
    const { app } = createTestApp(database.db);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const { access_token } = await signIn(app, admin.email, admin.password);
    await request(app).get('/users').set('authorization', `Bearer ${access_token}`).expect(200);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', admin.id).execute();
    await request(app).get('/users').set('authorization', `Bearer ${access_token}`).expect(401);
  });
});
