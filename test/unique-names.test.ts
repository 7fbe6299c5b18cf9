// Text people read is text other people wrote: names are stored NFC and trimmed, a
// bidirectional control never gets in, and names that must be unique (roles, keys in use, e-mail
// addresses) are compared as RFC 8265 compares usernames, by a key the database's unique indexes
// hold (migration 20261212T1000_unique_name_keys), so racing writers cannot both win either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { Migrator, sql, type Kysely } from 'kysely';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { adminRoleId, createAppWithTestBearer, makeUser, testBearer } from './support/access-fixtures.js';
import { roleRow } from './support/rows.js';
import type { Database } from '../src/db/schema.js';
import { loadMigrations } from '../src/db/migrations/index.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { RoleService } from '../src/roles/service.js';
import { UserService } from '../src/users/service.js';
import { revokeSessions } from '../src/auth/sessions/revocation.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import { createUserWithPassword, DuplicateEmailError } from '../src/users/credentials.js';
import { OPERATOR } from '../src/auth/authority.js';
import { systemClock } from '../src/clock.js';

const migrations = await loadMigrations();

let database: TestDatabase;
let auth: string;
beforeAll(async () => {
  database = await createTestDatabase();
  auth = testBearer((await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id);
});
afterAll(() => database.destroy());

/** Rows of the tables a refused write must leave as they were. */
const counts = async (db: Kysely<Database>) => ({
  users: Number((await sql<{ n: string }>`select count(*) as n from users`.execute(db)).rows[0]!.n),
  roles: Number((await sql<{ n: string }>`select count(*) as n from roles`.execute(db)).rows[0]!.n),
  keys: Number((await sql<{ n: string }>`select count(*) as n from api_keys`.execute(db)).rows[0]!.n),
  events: Number((await sql<{ n: string }>`select count(*) as n from security_events`.execute(db)).rows[0]!.n),
});

describe('impersonating the admin role by a look-alike name', () => {
  it('refuses a role named `Admin ` (trailing space) beside the built-in admin: 409, nothing written', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const before = await counts(database.db);
    const res = await request(app).post('/roles').set('authorization', auth).send({ name: 'Admin ', permissions: ['users.list'] });
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('name_taken');
    expect(await counts(database.db)).toEqual(before);
  });

  it('refuses `ＡＤＭＩＮ` (full-width letters): the contract allows letters of A-Z only, and the service compares by key anyway', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const before = await counts(database.db);
    const res = await request(app).post('/roles').set('authorization', auth).send({ name: 'ＡＤＭＩＮ', permissions: [] });
    expect(res.status).toBe(400);
    // The operator's side has no contract in front of it: the key and its unique index refuse it there.
    const roles = new RoleService({ db: database.db, clock: systemClock });
    await expect(database.db.transaction().execute((trx) => roles.create(trx, OPERATOR, { name: 'ＡＤＭＩＮ', permissions: [] }))).rejects.toMatchObject({ code: 'name_taken' });
    expect(await counts(database.db)).toEqual(before);
  });

  it('refuses renaming a role to `ADMIN` (409), and the database itself refuses a row whose key is taken', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const created = await request(app).post('/roles').set('authorization', auth).send({ name: 'Auditors', permissions: [] }).expect(201);
    const renamed = await request(app).patch(`/roles/${created.body.id}`).set('authorization', auth).send({ name: 'ADMIN' });
    expect(renamed.status).toBe(409);
    expect((await request(app).get('/roles').set('authorization', auth)).body.data.filter((r: { name: string }) => r.name.toLowerCase() === 'admin')).toHaveLength(1);
    await expect(database.db.insertInto('roles').values(roleRow({ name: 'Ａｄｍｉｎ' })).execute()).rejects.toMatchObject({ code: '23505', constraint: 'roles_name_key_key' });
  });

  it('lets exactly one of two racing creates of `Support ` and `support` through', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const racing = await Promise.all(['Racers ', 'racers', 'ＲＡＣＥＲＳ'].map((name) => request(app).post('/roles').set('authorization', auth).send({ name, permissions: [] })));
    // The full-width one is the contract's 400; of the two others, the unique index lets one in.
    expect(racing.map((r) => r.status).sort()).toEqual([201, 400, 409]);
    expect(racing.find((r) => r.status === 201)!.body.name).toMatch(/^racers$/i);
  });

  it('finds a role to grant by its key: `--role ADMIN ` names the admin role', async () => {
    const users = new UserService({ db: database.db, clock: systemClock }, revokeSessions);
    const draft = await users.draft({ email: 'granted@example.com', first_name: 'G', last_name: 'R', roles: [' ADMIN'] });
    const { user } = await database.db.transaction().execute((trx) => users.create(trx, OPERATOR, draft));
    expect(user.roles).toEqual(['admin']);
  });
});

describe('hiding a name behind bidirectional controls', () => {
  it('refuses a user named with U+202E (right-to-left override): 400, nothing written', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const before = await counts(database.db);
    const res = await request(app)
      .post('/users')
      .set('authorization', auth)
      .send({ email: 'spoof@example.com', first_name: 'Ada\u202Enimda', last_name: 'Lovelace' });
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([expect.objectContaining({ location: 'request/body/first_name', error_code: 'bidi_control' })]);
    expect(await counts(database.db)).toEqual(before);
  });

  it('refuses an isolate (U+2066) in a renamed user, a role description and a key name; nothing changes', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const user = await makeUser(database.db);
    const before = await counts(database.db);
    const patched = await request(app).patch(`/users/${user.id}`).set('authorization', auth).send({ last_name: 'Smith\u2066' });
    expect(patched.status).toBe(400);
    expect((await database.db.selectFrom('users').select('last_name').where('id', '=', user.id).executeTakeFirstOrThrow()).last_name).toBe('User');
    const role = await request(app).post('/roles').set('authorization', auth).send({ name: 'Readers', description: 'reads \u2067everything', permissions: [] });
    expect(role.status).toBe(400);
    const key = await request(app).post('/api-keys').set('authorization', auth).send({ name: 'sync\u202Dkey', permissions: ['users.list'] });
    expect(key.status).toBe(400);
    expect(await counts(database.db)).toEqual(before);
  });

  it('stores names NFC and trimmed, as the audit journal shows them', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const res = await request(app).post('/users').set('authorization', auth).send({ email: 'cafe@example.com', first_name: '  Rene\u0301e ', last_name: 'Cafe\u0301' });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ first_name: 'Ren\u00e9e', last_name: 'Caf\u00e9' });
    const event = await database.db.selectFrom('security_events').select('target_label').where('target_id', '=', res.body.id).executeTakeFirstOrThrow();
    expect(event.target_label).toBe('Ren\u00e9e Caf\u00e9');
  });
});

describe('a second account on the same address', () => {
  it('refuses a duplicate e-mail in full-width letters or another case, from the API and from the command line', async () => {
    const { app } = createAppWithTestBearer(database.db);
    await request(app).post('/users').set('authorization', auth).send({ email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' }).expect(201);
    const before = await counts(database.db);
    // The contract's e-mail format admits ASCII only: the full-width address is a 400 there...
    expect((await request(app).post('/users').set('authorization', auth).send({ email: 'ｇｒａｃｅ@example.com', first_name: 'G', last_name: 'H' })).status).toBe(400);
    const shouted = await request(app).post('/users').set('authorization', auth).send({ email: 'GRACE@Example.COM', first_name: 'G', last_name: 'H' });
    expect(shouted.status).toBe(409);
    expect(shouted.body.code).toBe('email_taken');
    // ...and the command line, which has no contract, meets the key and its unique index.
    const users = new UserService({ db: database.db, clock: systemClock }, revokeSessions);
    const draft = await users.draft({ email: 'ｇｒａｃｅ@example.com', first_name: 'G', last_name: 'H' });
    await expect(database.db.transaction().execute((trx) => users.create(trx, OPERATOR, draft))).rejects.toMatchObject({ code: 'email_taken' });
    await expect(
      createUserWithPassword(database.db, { email: 'ＧＲＡＣＥ@example.com', firstName: 'G', lastName: 'H', password: 'a long enough passphrase 1234' }),
    ).rejects.toBeInstanceOf(DuplicateEmailError);
    expect(await counts(database.db)).toEqual(before);
  });

  it('lets one of two racing command-line creations of one address through, the other gets DuplicateEmailError', async () => {
    const create = (email: string) => createUserWithPassword(database.db, { email, firstName: 'R', lastName: 'C', password: 'a long enough passphrase 1234' });
    const results = await Promise.allSettled([create('race@example.com'), create('ＲＡＣＥ@example.com'), create('Race@example.com ')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateEmailError);
  });
});

describe('API key names', () => {
  it('refuses a key in use named the same in full width or with spaces around; a revoked key frees its name', async () => {
    const keys = new ApiKeyService({ db: database.db, clock: systemClock });
    const makeKey = (name: string) => {
      const draft = keys.draft(OPERATOR, { name, permissions: ['users.list'] });
      return database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
    };
    const { key } = await makeKey('CRM sync');
    for (const name of [' crm sync', 'ＣＲＭ\u3000ｓｙｎｃ']) {
      await expect(makeKey(name)).rejects.toMatchObject({ code: 'name_taken' });
    }
    await keys.revoke(OPERATOR, key.id);
    expect((await makeKey('ＣＲＭ\u3000ｓｙｎｃ')).key.name).toBe('ＣＲＭ\u3000ｓｙｎｃ');
  });
});

describe('migration 20261212T1000_unique_name_keys on an existing database', () => {
  const MIGRATION = '20261212T1000_unique_name_keys';
  const migrateBefore = async (db: Kysely<Database>) => {
    const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < MIGRATION));
    const { error } = await new Migrator({ db, provider: { getMigrations: async () => before } }).migrateToLatest();
    expect(error).toBeUndefined();
  };

  it('cleans the names stored before, keys them, and renames the later of two that became one', async () => {
    const old = await createTestDatabase({ empty: true });
    try {
      const { db } = old;
      await migrateBefore(db);
      await sql`insert into roles (name, description, created_at) values ('Admin ', 'look-alike', now()), ('Ops', E'on call\\u202E', now())`.execute(db);
      await sql`insert into api_keys (name, permissions, display_prefix, last_characters, created_at, updated_at) values
        ('sync', '{users.list}', 'bo_', 'aaaa', now() - interval '1 day', now()),
        ('Sync ', '{users.list}', 'bo_', 'bbbb', now(), now())`.execute(db);
      await sql`insert into users (email, first_name, last_name) values ('Ada@Example.com', E'Ada\\u202E', ' Lovelace'), ('grace@example.com', 'Grace', 'Hopper')`.execute(db);

      expect(await migrateToLatest(db)).toContain(MIGRATION);

      const roles = await db.selectFrom('roles').select(['name', 'name_key', 'description', 'built_in']).orderBy('name_key').execute();
      expect(roles).toEqual([
        { name: 'admin', name_key: 'admin', description: expect.any(String), built_in: true },
        { name: 'Admin-2', name_key: 'admin-2', description: 'look-alike', built_in: false },
        { name: 'Ops', name_key: 'ops', description: 'on call', built_in: false },
      ]);
      const keys = await db.selectFrom('api_keys').select(['name', 'name_key']).orderBy('created_at').execute();
      expect(keys).toEqual([{ name: 'sync', name_key: 'sync' }, { name: 'Sync-2', name_key: 'sync-2' }]);
      const users = await db.selectFrom('users').select(['email', 'email_key', 'first_name', 'last_name']).orderBy('email_key').execute();
      expect(users).toEqual([
        { email: 'Ada@Example.com', email_key: 'ada@example.com', first_name: 'Ada', last_name: 'Lovelace' },
        { email: 'grace@example.com', email_key: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' },
      ]);
    } finally {
      await old.destroy();
    }
  });

  it('stops, naming them, when two users have one address under the new comparison (and changes nothing)', async () => {
    const old = await createTestDatabase({ empty: true });
    try {
      const { db } = old;
      await migrateBefore(db);
      await sql`insert into users (email, first_name, last_name) values ('ada@example.com', 'A', 'L'), ('ＡＤＡ@example.com', 'A', 'L')`.execute(db);
      await expect(migrateToLatest(db)).rejects.toThrow(/ada@example\.com, ＡＤＡ@example\.com are one address/);
      const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns where table_name = 'users' and column_name = 'email_key'`.execute(db);
      expect(columns.rows).toEqual([]);
    } finally {
      await old.destroy();
    }
  });
});
