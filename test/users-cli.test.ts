// The first administrator without the API: `backoffice users create` (password on standard input)
// and the automatic one on an empty database.
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { signIn } from './support/sessions.js';
import { createFirstAdministrator } from '../src/users/bootstrap.js';
import { ADMIN_ROLE_ID } from '../src/auth/permissions.js';
import { roleRow } from './support/rows.js';
import { runCli } from './support/cli.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const cli = (args: string[], input: string, url = database.url) => runCli(args, { databaseUrl: url, input, env: { LOG_LEVEL: 'warn' } });

describe('first administrator', () => {
  it('is created on an empty database with its password written once to an owner-only file, and can sign in with every permission once it has chosen its own', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-first-admin-'));
    try {
      const created = await createFirstAdministrator(database.db, 'root@backoffice.local', dataDir);
      expect(created).toEqual({ email: 'root@backoffice.local', passwordFile: join(dataDir, 'first-administrator.txt') });
      expect(await createFirstAdministrator(database.db, 'root@backoffice.local', dataDir)).toBeNull();
      expect(statSync(created!.passwordFile).mode & 0o777).toBe(0o600);
      const password = /password: (\S+)/.exec(readFileSync(created!.passwordFile, 'utf8'))?.[1] ?? '';
      expect(password).toHaveLength(24);
      const { app } = createTestApp(database.db);
      const set = await signIn(app, 'root@backoffice.local', password);
      const auth = `Bearer ${set.access_token}`;
      expect((await request(app).get('/me').set('authorization', auth)).body.code).toBe('password_change_required');
      expect((await request(app).put('/me/password').set('authorization', auth).send({ current_password: password, new_password: 'the administrator chose this one' })).status).toBe(204);
      const me = await request(app).get('/me').set('authorization', auth);
      expect(me.body.user.roles).toEqual(['admin']);
      expect(me.body.permissions).toContain('sessions.manage');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('is given the admin role by its id: after the role was renamed and a role took the name "admin", the squatter is not what it gets', async () => {
    const fresh = await createTestDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-first-admin-'));
    try {
      await fresh.db.updateTable('roles').set(roleRow({ name: 'root' })).where('id', '=', ADMIN_ROLE_ID).execute();
      const squatter = await fresh.db.insertInto('roles').values(roleRow({ name: 'admin' })).returning('id').executeTakeFirstOrThrow();
      const created = await createFirstAdministrator(fresh.db, 'root@backoffice.local', dataDir);
      const held = await fresh.db
        .selectFrom('user_roles')
        .innerJoin('users', 'users.id', 'user_roles.user_id')
        .select('user_roles.role_id')
        .where('users.email', '=', created!.email)
        .execute();
      expect(held).toEqual([{ role_id: ADMIN_ROLE_ID }]);
      expect(held).not.toContainEqual({ role_id: squatter.id });
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
      await fresh.destroy();
    }
  });
});

describe('backoffice users create', () => {
  it('creates a user whose password comes from standard input, with the admin role', { timeout: budget({ cliRun: 1 }) }, async () => {
    const password = 'a password typed on stdin';
    const result = await cli(['users', 'create', '--email', 'grace@example.com', '--first-name', 'Grace', '--last-name', 'Hopper', '--role', 'admin'], `${password}\n`);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/Created user [0-9a-f-]{36} <grace@example.com> with roles admin/);
    expect(result.stdout).not.toContain(password);
    const { app } = createTestApp(database.db);
    const set = await signIn(app, 'grace@example.com', password);
    expect((await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);
  });

  it('with --must-change-password, makes the user choose their own password before anything else', { timeout: budget({ cliRun: 1 }) }, async () => {
    const password = 'chosen by the operator for ada';
    // No role: the refusal comes before any permission check (and the file's administrators stay two).
    const result = await cli(['users', 'create', '--email', 'ada@example.com', '--first-name', 'Ada', '--last-name', 'Lovelace', '--must-change-password'], `${password}\n`);
    expect(result.status, result.stderr).toBe(0);
    const { app } = createTestApp(database.db);
    const set = await signIn(app, 'ada@example.com', password);
    const refused = await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`);
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('password_change_required');
  });

  it('works on a new empty database: it migrates first, as the service does', { timeout: budget({ cliRun: 5 }) }, async () => {
    const empty = await createTestDatabase({ empty: true });
    try {
      const password = 'the first password of this database';
      const created = await cli(['users', 'create', '--email', 'first@example.com', '--first-name', 'First', '--last-name', 'Operator', '--role', 'admin'], `${password}\n`, empty.url);
      expect(created.status, created.stderr).toBe(0);
      expect(created.stderr).toMatch(/^Applied database migrations first: 20261121T1200_users, /);
      const { app } = createTestApp(empty.db);
      const set = await signIn(app, 'first@example.com', password);
      expect((await request(app).get('/users').set('authorization', `Bearer ${set.access_token}`)).status).toBe(200);
      // Every other command too, on another new database.
      const other = await createTestDatabase({ empty: true });
      try {
        for (const args of [['roles', 'list'], ['sweep'], ['rotate-cursor-key'], ['api-keys', 'create', '--name', 'first', '--permissions', 'users.list', '--expires-at', '2099-01-01']]) {
          const result = await cli(args, '', other.url);
          expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0);
        }
      } finally {
        await other.destroy();
      }
    } finally {
      await empty.destroy();
    }
  });

  it('refuses a weak password, a duplicate e-mail and an unknown role, creating nothing', { timeout: budget({ cliRun: 4 }) }, async () => {
    const before = (await database.db.selectFrom('users').select('id').execute()).length;
    const weak = await cli(['users', 'create', '--email', 'weak@example.com', '--first-name', 'W', '--last-name', 'K'], 'short\n');
    expect(weak.status).toBe(1);
    expect(weak.stderr).toContain('at least 12 characters');
    const common = await cli(['users', 'create', '--email', 'weak@example.com', '--first-name', 'W', '--last-name', 'K'], 'qwerty123456\n');
    expect(common.stderr).toContain('too common');
    const duplicate = await cli(['users', 'create', '--email', 'GRACE@example.com', '--first-name', 'G', '--last-name', 'H'], 'another fine password\n');
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr).toContain('already exists');
    const role = await cli(['users', 'create', '--email', 'new@example.com', '--first-name', 'N', '--last-name', 'W', '--role', 'nope'], 'another fine password\n');
    expect(role.status).toBe(1);
    expect(role.stderr).toContain('No role named nope');
    expect((await database.db.selectFrom('users').select('id').execute()).length).toBe(before);
  });
});

describe('backoffice users disable|set-roles', () => {
  it('keeps the last active administrator: demoting or disabling it exits 1 with last_admin, changing nothing', { timeout: budget({ cliRun: 5 }) }, async () => {
    // root@backoffice.local and grace@example.com are the administrators made above.
    const demoted = await cli(['users', 'set-roles', '--email', 'root@backoffice.local'], '');
    expect(demoted.stderr).toBe('');
    expect(demoted.stdout).toContain('now holds: no role');
    const before = await database.db.selectFrom('users').select(['email', 'status']).where('email', '=', 'grace@example.com').executeTakeFirstOrThrow();
    for (const args of [['set-roles', '--email', 'grace@example.com'], ['disable', '--email', 'grace@example.com']]) {
      const refused = await cli(['users', ...args], '');
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain('last active administrator');
      expect(refused.stderr).toContain('(last_admin)');
    }
    const after = await database.db
      .selectFrom('users as u')
      .select(['u.email', 'u.status'])
      .where('u.email', '=', 'grace@example.com')
      .where((eb) => eb.exists(eb.selectFrom('user_roles as ur').innerJoin('roles as r', 'r.id', 'ur.role_id').select('ur.role_id').whereRef('ur.user_id', '=', 'u.id').where('r.name', '=', 'admin')))
      .executeTakeFirst();
    expect(after).toEqual(before);
    // Another administrator again, and then grace may be disabled.
    expect((await cli(['users', 'set-roles', '--email', 'root@backoffice.local', '--role', 'admin'], '')).status).toBe(0);
    const disabled = await cli(['users', 'disable', '--email', 'grace@example.com'], '');
    expect(disabled.status, disabled.stderr).toBe(0);
  });
});
