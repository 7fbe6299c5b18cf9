// The admin role is the role with a fixed id (migration 20261208T1000_admin_role_id,
// ADMIN_ROLE_ID): an existing database's admin role, made with a random id, takes the fixed one,
// and its holders keep every right across the migration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Migrator, sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { signIn } from './support/sessions.js';
import { loadMigrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { budget } from './support/budgets.js';
import { createUser } from './support/sessions.js';
import { steppedUp } from './support/second-factor.js';
import { roleRow } from './support/rows.js';
import { makeApiKey } from './support/access-fixtures.js';

const migrations = await loadMigrations();

const MIGRATION = '20261208T1000_admin_role_id';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
});
afterAll(() => database.destroy());

describe('migration 20261208T1000_admin_role_id', () => {
  // Every migration up to this one, then this one, on a fresh database: a cluster's worth of DDL.
  it('gives an existing admin role the fixed id; its holders stay administrators and its other references follow', { timeout: budget({ pgliteStart: 1 }) }, async () => {
    const { db } = database;
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));
    const migrator = new Migrator({ db, provider: { getMigrations: async () => before } });
    const { error } = await migrator.migrateToLatest();
    expect(error).toBeUndefined();

    const { id: oldId } = await db.selectFrom('roles').select('id').where('built_in', '=', true).executeTakeFirstOrThrow();
    expect(oldId).not.toBe(ADMIN_ROLE_ID);
    const password = 'a long enough passphrase 1234';
    // Written as the schema was then (no email_key yet).
    const [user] = (
      await sql<{ id: string }>`insert into users (email, first_name, last_name, password_hash)
        values ('old-admin@example.com', 'Old', 'Admin', ${await hashPassword(password)}) returning id`.execute(db)
    ).rows;
    if (!user) throw new Error('no user inserted');
    await db.insertInto('user_roles').values({ user_id: user.id, role_id: oldId }).execute();

    expect(await migrateToLatest(db)).toContain(MIGRATION);

    const roles = await db.selectFrom('roles').select(['id', 'name', 'built_in']).execute();
    expect(roles).toEqual([{ id: ADMIN_ROLE_ID, name: 'admin', built_in: true }]);
    const held = await db.selectFrom('user_roles').select('role_id').where('user_id', '=', user.id).execute();
    expect(held).toEqual([{ role_id: ADMIN_ROLE_ID }]);
    const { app } = createTestApp(db);
    const { access_token } = await signIn(app, 'old-admin@example.com', password);
    const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`).expect(200);
    expect([...me.body.permissions].sort()).toEqual([...PERMISSIONS].sort());
    await request(app).get('/roles').set('authorization', `Bearer ${access_token}`).expect(200);
    // The id can no longer move: the role's references would not follow an id the code does not know.
    await expect(sql`update roles set id = ${oldId} where id = ${ADMIN_ROLE_ID}`.execute(db)).rejects.toMatchObject({ code: '23514' });
  });
});

describe('security: the admin role known by its id: attacks on the name', () => {
  it('name squatting: with the admin role renamed in the database, a role named admin makes nobody an administrator (bearer, key, last-admin)', async () => {
    const own = await createTestDatabase();
    try {
      const { db } = own;
      const { app } = createTestApp(db);
      await db.updateTable('roles').set(roleRow({ name: 'root' })).where('id', '=', ADMIN_ROLE_ID).execute();
      const manager = await createUser(db, { permissions: ['roles.manage', 'users.update', 'api_keys.manage', 'users.list'] });
      const managerSet = await signIn(app, manager.email, manager.password);
      await steppedUp(app, managerSet.access_token, manager.password); // creating a key below is a sensitive change
      const managerAuth = `Bearer ${managerSet.access_token}`;
      const made = await request(app).post('/roles').set('authorization', managerAuth).send({ name: 'admin', permissions: ['users.list'] });
      expect(made.status, made.text).toBe(201);
      const granted = await request(app).patch(`/users/${manager.id}`).set('authorization', managerAuth).send({ roles: [`role-${manager.id}`, 'admin'] });
      expect(granted.status, granted.text).toBe(200);
      // The bearer lookup: no new permission.
      const me = await request(app).get('/me').set('authorization', managerAuth);
      expect([...me.body.permissions].sort()).toEqual(['api_keys.manage', 'roles.manage', 'users.list', 'users.update']);
      // The key lookup: a key the manager makes is worth what the manager holds, not more.
      const key = await request(app).post('/api-keys').set('authorization', managerAuth).send({ name: 'squat', permissions: ['users.list'] });
      expect(key.status, key.text).toBe(201);
      await db.updateTable('api_keys').set({ permissions: ['users.list', 'users.create'] }).where('id', '=', key.body.api_key.id).execute();
      expect((await request(app).post('/users').set('x-api-key', key.body.secret).send({ email: 'squat@example.com', first_name: 'S', last_name: 'Q' })).status).toBe(403);
      // The last-admin check: the only holder of the real admin role (now named root) stays.
      const root = await createUser(db, { roles: ['root'] });
      const rootAuth = `Bearer ${(await signIn(app, root.email, root.password)).access_token}`;
      expect([...(await request(app).get('/me').set('authorization', rootAuth)).body.permissions].sort()).toEqual([...PERMISSIONS].sort());
      const others = await db.selectFrom('user_roles').select('user_id').where('role_id', '=', ADMIN_ROLE_ID).execute();
      for (const { user_id } of others) if (user_id !== root.id) await db.deleteFrom('user_roles').where('user_id', '=', user_id).where('role_id', '=', ADMIN_ROLE_ID).execute();
      const demote = await request(app).patch(`/users/${root.id}`).set('authorization', rootAuth).send({ roles: ['admin'] });
      expect(demote.status, demote.text).toBe(409);
      expect(demote.body.code).toBe('last_admin');
    } finally {
      await own.destroy();
    }
  });
});

describe('security: migration 20261208T1000_admin_role_id on existing databases', () => {
  const MIGRATION = '20261208T1000_admin_role_id';
  const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));

  /** A database migrated up to just before the migration, with `prepare` applied to it. */
  async function oldDatabase() {
    const old = await createTestDatabase({ empty: true });
    const { error } = await new Migrator({ db: old.db, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
    return old;
  }

  /** A user holding the roles, written as the schema before (`migrated`: after) the migrations has it. */
  async function personHolding(db: TestDatabase['db'], roleIds: string[], { migrated = false } = {}) {
    const password = 'a long enough passphrase 1234';
    const email = `holder-${Math.random()}@example.com`;
    const hash = await hashPassword(password);
    const [{ id }] = (
      migrated
        ? await sql<{ id: string }>`insert into users (email, email_key, first_name, last_name, password_hash) values (${email}, ${email}, 'Role', 'Holder', ${hash}) returning id`.execute(db)
        : await sql<{ id: string }>`insert into users (email, first_name, last_name, password_hash) values (${email}, 'Role', 'Holder', ${hash}) returning id`.execute(db)
    ).rows as [{ id: string }];
    if (roleIds.length) await db.insertInto('user_roles').values(roleIds.map((role_id) => ({ user_id: id, role_id }))).execute();
    return { id, email, password };
  }

  /** A role as the schema before the migration has it (no name_key yet). */
  const oldRole = async (db: TestDatabase['db'], name: string) =>
    (await sql<{ id: string }>`insert into roles (name) values (${name}) returning id`.execute(db)).rows[0]!;

  async function permissionsOf(db: TestDatabase['db'], who: { email: string; password: string }) {
    const { app } = createTestApp(db);
    const { access_token } = await signIn(app, who.email, who.password);
    const me = await request(app).get('/me').set('authorization', `Bearer ${access_token}`);
    expect(me.status, me.text).toBe(200);
    return [...(me.body.permissions as string[])].sort();
  }

  it('admin role renamed before the migration: its holders, who were not administrators, do not become ones, and the migration applies', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      // Renamed in the database (the API refuses): by the rule of the time, no longer the admin role.
      const { id: renamed } = await db.updateTable('roles').set({ name: 'superusers' }).where('built_in', '=', true).returning('id').executeTakeFirstOrThrow();
      await db.insertInto('role_permissions').values({ role_id: renamed, permission: 'users.list' }).execute();
      const real = await oldRole(db, 'ops');
      await db.insertInto('role_permissions').values({ role_id: real.id, permission: 'roles.manage' }).execute();
      const holder = await personHolding(db, [renamed]);
      const other = await personHolding(db, [real.id]);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      // What the role granted by the rule of the time (the renamed role was no longer the admin role).
      expect(await permissionsOf(db, holder)).toEqual(['users.list']);
      expect(await permissionsOf(db, other)).toEqual(['roles.manage']);
      // No role carries the admin id; none is built in.
      expect(await db.selectFrom('roles').select('id').where((eb) => eb.or([eb('id', '=', ADMIN_ROLE_ID), eb('built_in', '=', true)])).execute()).toEqual([]);
    } finally {
      await old.destroy();
    }
  });

  it('a second role named admin (the built-in one renamed, a plain one named admin since): neither\u2019s holders become administrators', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      const { id: builtIn } = await db.updateTable('roles').set({ name: 'root' }).where('built_in', '=', true).returning('id').executeTakeFirstOrThrow();
      const impostor = await oldRole(db, 'admin');
      await db.insertInto('role_permissions').values({ role_id: impostor.id, permission: 'tasks.list' }).execute();
      const ofImpostor = await personHolding(db, [impostor.id]);
      const ofRoot = await personHolding(db, [builtIn]);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      expect(await permissionsOf(db, ofImpostor)).toEqual(['tasks.list']);
      expect(await permissionsOf(db, ofRoot)).toEqual([]);
      const admins = await db.selectFrom('user_roles').select('user_id').where('role_id', '=', ADMIN_ROLE_ID).execute();
      expect(admins).toEqual([]);
    } finally {
      await old.destroy();
    }
  });

  it('admin role deleted before the migration: the migration applies, and a role named admin made afterwards grants only its own permissions', async () => {
    const old = await oldDatabase();
    try {
      const { db } = old;
      await db.deleteFrom('roles').where('built_in', '=', true).execute();
      expect(await migrateToLatest(db)).toContain(MIGRATION);
      const { app } = createTestApp(db);
      const key = await makeApiKey(db, ['roles.manage', 'users.list']);
      const made = await request(app).post('/roles').set('x-api-key', key.secret).send({ name: 'admin', permissions: ['users.list'] });
      expect(made.status, made.text).toBe(201);
      expect(made.body).toMatchObject({ built_in: false, permissions: ['users.list'] });
      expect(made.body.id).not.toBe(ADMIN_ROLE_ID);
      const holder = await personHolding(db, [made.body.id as string], { migrated: true });
      expect(await permissionsOf(db, holder)).toEqual(['users.list']);
    } finally {
      await old.destroy();
    }
  });

  it('a new built-in role or a role taking the admin id is refused by the database; the API cannot set either', async () => {
    const { db } = database;
    await expect(db.insertInto('roles').values(roleRow({ name: `fake-admin-${Math.random()}`, built_in: true })).execute()).rejects.toMatchObject({ code: '23514' });
    await expect(sql`update roles set built_in = false where id = ${ADMIN_ROLE_ID}`.execute(db)).rejects.toMatchObject({ code: '23514' });
    const { app } = createTestApp(db);
    const key = await makeApiKey(db, ['roles.manage', 'users.list']);
    for (const body of [
      { name: `built-${Math.random()}`, permissions: [], built_in: true },
      { name: `with-id-${Math.random()}`, permissions: [], id: ADMIN_ROLE_ID },
    ]) {
      const res = await request(app).post('/roles').set('x-api-key', key.secret).send(body);
      expect(res.status, res.text).toBe(400);
    }
    // The admin role, renamed in the database, is still the admin role and still cannot be changed.
    const res = await request(app).patch(`/roles/${ADMIN_ROLE_ID}`).set('x-api-key', key.secret).send({ name: 'renamed-admin' });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('role_built_in');
    expect(PERMISSIONS.length).toBeGreaterThan(0);
  });
});
