// The admin role is the role with a fixed id (migration 20261208T1000_admin_role_id,
// ADMIN_ROLE_ID): an existing database's admin role, made with a random id, takes the fixed one,
// and its holders keep every right across the migration.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Migrator, sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { signIn } from './support/sessions.js';
import { migrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { ADMIN_ROLE_ID, PERMISSIONS } from '../src/auth/permissions.js';
import { hashPassword } from '../src/auth/secrets/passwords.js';
import { budget } from './support/budgets.js';

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
