// The command line, run as an operator would (a child process on the test database): roles list,
// api-keys create/update/revoke (with rate limits, allowlists, uses and metadata, refused in the API's words), seed;
// bad input exits non-zero with a clear message.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { sql } from 'kysely';
import { runCli } from './support/cli.js';
import { budget } from './support/budgets.js';
import { adminRoleId, createAppWithTestBearer, makeUser, testBearer } from './support/access-fixtures.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const cli = (...args: string[]) => runCli(args, { databaseUrl: database.url, env: { NODE_ENV: 'development' } });

describe('backoffice CLI', () => {
  it('roles list shows the built-in admin role', { timeout: budget({ cliRun: 1 }) }, async () => {
    const res = await cli('roles', 'list');
    expect(res.status).toBe(0);
    expect(res.stdout).toMatch(/^admin \(built-in\): users\.list, /m);
  });

  it('api-keys create prints a working secret once; revoke stops it', { timeout: budget({ cliRun: 2 }) }, async () => {
    const created = await cli('api-keys', 'create', '--name', 'CLI key', '--permissions', 'users.list', '--expires-at', '2099-01-01T00:00:00Z');
    expect(created.status, created.stderr).toBe(0);
    const secret = created.stdout.trim();
    expect(secret).toMatch(/^bok_\w{43}_\w{6}$/);
    expect(created.stderr).toContain('never shown again');
    const { app } = createTestApp(database.db);
    expect((await request(app).get('/users').set('x-api-key', secret)).status).toBe(200);

    const id = /Created API key ([0-9a-f-]{36})/.exec(created.stderr)?.[1];
    const revoked = await cli('api-keys', 'revoke', id!);
    expect(revoked.status).toBe(0);
    expect((await request(app).get('/users').set('x-api-key', secret)).status).toBe(401);
  });

  it('api-keys create and update set a rate limit and an IP allowlist, and take them away', { timeout: budget({ cliRun: 3 }) }, async () => {
    const created = await cli('api-keys', 'create', '--name', 'CLI limited', '--permissions', 'users.list', '--rate-limit', '5/10', '--allowed-ips', '203.0.113.0/24, 2001:db8::/48');
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain('rate limit 5 per 10 s, allowed from 203.0.113.0/24, 2001:db8::/48');
    const id = /Created API key ([0-9a-f-]{36})/.exec(created.stderr)![1]!;
    const row = () => database.db.selectFrom('api_keys').select(['rate_limit_requests', 'rate_limit_per_seconds', 'allowed_ips']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(await row()).toEqual({ rate_limit_requests: 5, rate_limit_per_seconds: 10, allowed_ips: ['203.0.113.0/24', '2001:db8::/48'] });

    const tightened = await cli('api-keys', 'update', id, '--rate-limit', '2/10', '--allowed-ips', '203.0.113.7');
    expect(tightened.status, tightened.stderr).toBe(0);
    expect(tightened.stdout).toContain(`Updated API key ${id} (CLI limited): rate limit 2 per 10 s, allowed from 203.0.113.7.`);
    expect(await row()).toEqual({ rate_limit_requests: 2, rate_limit_per_seconds: 10, allowed_ips: ['203.0.113.7'] });
    const journal = await database.db.selectFrom('security_events').select('changes').where('type', '=', 'api_key_updated').where('target_id', '=', id).executeTakeFirstOrThrow();
    expect(journal.changes).toMatchObject({ before: { rate_limit: '5/10s' }, after: { rate_limit: '2/10s', allowed_ips: ['203.0.113.7'] } });

    const lifted = await cli('api-keys', 'update', id, '--rate-limit', 'none', '--allowed-ips', 'any');
    expect(lifted.status, lifted.stderr).toBe(0);
    expect(lifted.stdout).toContain('rate limit none of its own, allowed from anywhere');
    expect(await row()).toEqual({ rate_limit_requests: null, rate_limit_per_seconds: null, allowed_ips: null });
  });

  it('api-keys create and update set remaining uses, their refill and metadata, and remove them; a refill without uses is refused', { timeout: budget({ cliRun: 4 }) }, async () => {
    const created = await cli('api-keys', 'create', '--name', 'CLI uses', '--permissions', 'users.list', '--uses', '100', '--uses-refill', '1000/daily', '--metadata', '{"customer_id":"cus_8421"}');
    expect(created.status, created.stderr).toBe(0);
    expect(created.stderr).toContain('100 uses left, set to 1000 each day (UTC)');
    const id = /Created API key ([0-9a-f-]{36})/.exec(created.stderr)![1]!;
    const uses = () => database.db.selectFrom('api_key_uses').select(['remaining', 'refill_interval', 'refill_amount']).where('api_key_id', '=', id).executeTakeFirst();
    expect(await uses()).toEqual({ remaining: 100, refill_interval: 'day', refill_amount: 1000 });
    expect((await database.db.selectFrom('api_keys').select('metadata').where('id', '=', id).executeTakeFirstOrThrow()).metadata).toEqual({ customer_id: 'cus_8421' });

    const removed = await cli('api-keys', 'update', id, '--uses', 'none', '--metadata', 'none');
    expect(removed.status, removed.stderr).toBe(0);
    expect(removed.stdout).not.toContain('uses left');
    expect(await uses()).toBeUndefined();

    const refused = await cli('api-keys', 'update', id, '--uses-refill', '10/monthly');
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain('request/body/uses_refill needs remaining_uses');
    const badJson = await cli('api-keys', 'update', id, '--metadata', '[1,2]');
    expect(badJson.status).toBe(1);
    expect(badJson.stderr).toContain('expected a JSON object');
  });

  it('refuses a bad rate limit or allowlist in the words the API uses for the same body, changing nothing', { timeout: budget({ cliRun: 4 }) }, async () => {
    const admin = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] });
    const { app } = createAppWithTestBearer(database.db);
    const apiSays = async (body: object) => {
      const res = await request(app).post('/api-keys').set('authorization', testBearer(admin.id)).send({ name: 'Refused', permissions: ['users.list'], ...body });
      expect(res.status).toBe(400);
      // The API also names the failed choice of a field that may be null; the command line keeps the precise error.
      return (res.body as { errors: { location: string; message: string; error_code: string }[] }).errors.filter((e) => e.error_code !== 'oneOf' && e.message !== 'must be null');
    };
    for (const [options, body] of [
      [['--rate-limit', '0/10'], { rate_limit: { requests: 0, per_seconds: 10 } }],
      [['--rate-limit', '100/86401'], { rate_limit: { requests: 100, per_seconds: 86_401 } }],
      [['--allowed-ips', '192.0.2.5/24,not-an-address'], { allowed_ips: ['192.0.2.5/24', 'not-an-address'] }],
    ] as const) {
      const expected = await apiSays(body);
      expect(expected.length).toBeGreaterThan(0);
      const res = await cli('api-keys', 'create', '--name', 'Refused', '--permissions', 'users.list', ...options);
      expect(res.status, res.stderr).toBe(1);
      for (const error of expected) expect(res.stderr).toContain(`${error.location} ${error.message}`);
    }
    // A range with bits right of its prefix passes the schema; the service refuses it, for both.
    const [misaligned] = await apiSays({ allowed_ips: ['192.0.2.5/24'] });
    expect(misaligned!.message).toBe('192.0.2.5/24 has bits set right of its prefix: write 192.0.2.0/24');
    const res = await cli('api-keys', 'create', '--name', 'Refused', '--permissions', 'users.list', '--allowed-ips', '192.0.2.5/24');
    expect(res.status).toBe(1);
    expect(res.stderr).toContain(`${misaligned!.location} ${misaligned!.message}`);
    expect(await database.db.selectFrom('api_keys').select('id').where('name', '=', 'Refused').execute()).toEqual([]);
  });

  it('attack: --metadata naming __proto__ or constructor, which the API refuses (and its camel answer would drop), is refused on create and update, nothing written', { timeout: budget({ cliRun: 4 }) }, async () => {
    const digest = async () => JSON.stringify(await database.db.selectFrom('api_keys').select(['id', 'metadata']).orderBy('id').execute());
    const before = await digest();
    for (const metadata of ['{"__proto__":{"isAdmin":true}}', '{"x":{"constructor":{"prototype":{"polluted":1}}}}']) {
      const made = await cli('api-keys', 'create', '--name', `Proto ${metadata.length}`, '--permissions', 'users.list', '--metadata', metadata);
      expect(made.status, made.stdout).toBe(1);
      expect(made.stderr).toContain('is not accepted as a key');
      expect(made.stdout).not.toMatch(/bok_/);
    }
    expect(await digest()).toBe(before);
    const kept = await cli('api-keys', 'create', '--name', 'Proto target', '--permissions', 'users.list', '--metadata', '{"customer_id":"cus_1"}');
    const id = /Created API key ([0-9a-f-]{36})/.exec(kept.stderr)![1]!;
    const changed = await cli('api-keys', 'update', id, '--metadata', '{"__proto__":{"a":1}}');
    expect(changed.status).toBe(1);
    expect(changed.stderr).toContain('request/body/metadata/__proto__ is not accepted as a key');
    expect((await database.db.selectFrom('api_keys').select('metadata').where('id', '=', id).executeTakeFirstOrThrow()).metadata).toEqual({ customer_id: 'cus_1' });
  });

  it('refuses bad input with a message and a non-zero exit code, changing nothing', { timeout: budget({ cliRun: 5 }) }, async () => {
    const unknown = await cli('api-keys', 'create', '--name', 'Bad', '--permissions', 'users.lst');
    expect(unknown.status).not.toBe(0);
    expect(unknown.stderr).toContain('unknown permission(s): users.lst');
    const past = await cli('api-keys', 'create', '--name', 'Past', '--permissions', 'users.list', '--expires-at', '2001-01-01');
    expect(past.status).toBe(1);
    expect(past.stderr).toContain('must be in the future');
    const badId = await cli('api-keys', 'revoke', 'nope');
    expect(badId.status).not.toBe(0);
    expect(badId.stderr).toContain('expected the key id');
    const missing = await cli('api-keys', 'revoke', '00000000-0000-4000-8000-000000000000');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('No API key has this id');
    const zero = await cli('seed', '--users', '0');
    expect(zero.status).not.toBe(0);
    const keys = await database.db.selectFrom('api_keys').select('name').where('name', 'in', ['Bad', 'Past']).execute();
    expect(keys).toEqual([]);
  });

  it('rotate-cursor-key replaces the cursor signing key and nothing else', { timeout: budget({ cliRun: 1 }) }, async () => {
    const key = () => database.db.selectFrom('service_secrets').select('secret').where('name', '=', 'cursor_signing').executeTakeFirstOrThrow();
    const before = await key();
    const res = await cli('rotate-cursor-key');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toContain('Rotated the cursor signing key');
    const after = await key();
    expect(after.secret).toHaveLength(32);
    expect(after.secret.equals(before.secret)).toBe(false);
  });

  it('seed --users N inserts N realistic users with a progress bar', { timeout: budget({ cliRun: 1 }) }, async () => {
    const before = Number((await database.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    const res = await cli('seed', '--users', '12345', '--seed', '42');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Inserted 12345 users/);
    expect(res.stderr).toContain('Seeding users');
    const after = Number((await database.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
    expect(after - before).toBe(12345);
    // Each recorded in the audit trail as the command line's act.
    const recorded = await database.db.selectFrom('security_events').select((eb) => eb.fn.countAll().as('n')).where('type', '=', 'user_created').where('actor_type', '=', 'cli').where(sql<boolean>`details @> '{"seeded": true}'`).executeTakeFirstOrThrow();
    expect(Number(recorded.n)).toBe(12345);
    const sample = await database.db.selectFrom('users').select(['email', 'first_name', 'last_name']).where('email', 'like', '%@%.%').limit(50).execute();
    for (const u of sample) {
      expect(u.email).toMatch(/^[a-z0-9._-]+@[a-z0-9.-]+\.[a-z]+$/);
      expect(u.first_name.length).toBeGreaterThan(0);
      expect(u.last_name.length).toBeGreaterThan(0);
    }
  });

  it('seed --users N --meetings N plans N meetings among the active users, each attended by its organizer, recorded as the command line\u2019s act', { timeout: budget({ cliRun: 2 }) }, async () => {
    const res = await cli('seed', '--users', '300', '--meetings', '1500', '--seed', '7');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Inserted 300 users/);
    expect(res.stdout).toMatch(/Inserted 1500 meetings/);
    expect(res.stderr).toContain('Seeding meetings');
    const count = async (query: string) => Number((await sql<{ n: string }>`${sql.raw(query)}`.execute(database.db)).rows[0]!.n);
    expect(await count('select count(*) as n from meetings')).toBe(1500);
    // Every meeting: a valid span (the table's constraint), its organizer among 1 to 6 active people, created by them.
    expect(await count(`select count(*) as n from meetings m where not exists (select 1 from meeting_attendees a where a.meeting_id = m.id and a.user_id = m.organizer_id) or m.created_by_user_id <> m.organizer_id`)).toBe(0);
    expect(await count(`select count(*) as n from (select meeting_id from meeting_attendees group by meeting_id having count(*) not between 1 and 6) x`)).toBe(0);
    expect(await count(`select count(*) as n from meeting_attendees a join users u on u.id = a.user_id where u.status <> 'active'`)).toBe(0);
    expect(await count(`select count(*) as n from security_events where type = 'meeting_created' and actor_type = 'cli' and details @> '{"seeded": true}'`)).toBe(1500);
    // Readable through the API like any other.
    const key = await cli('api-keys', 'create', '--name', 'seed reader', '--permissions', 'meetings.list,meetings.read');
    const secret = key.stdout.trim();
    const { app } = createTestApp(database.db);
    const now = Date.now();
    const page = await request(app).get(`/meetings?from=${new Date(now - 30 * 86400_000).toISOString()}&until=${new Date(now + 30 * 86400_000).toISOString()}&limit=200`).set('x-api-key', secret);
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.length).toBeGreaterThan(40); // ~120 of 1,500 meetings over two years fall in these 60 days
  });

  it('seed --tasks N makes N tasks among the active users, recorded as the command line\u2019s act, readable and searchable through the API', { timeout: budget({ cliRun: 2 }) }, async () => {
    const res = await cli('seed', '--tasks', '1234', '--seed', '7');
    expect(res.status, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/Inserted 1234 tasks/);
    expect(res.stderr).toContain('Seeding tasks');
    const count = async (query: string) => Number((await sql<{ n: string }>`${sql.raw(query)}`.execute(database.db)).rows[0]!.n);
    expect(await count('select count(*) as n from tasks')).toBe(1234);
    // Made and assigned by active people only; completed exactly when done (the table's check); every status there.
    expect(await count(`select count(*) as n from tasks t join users u on u.id in (t.created_by_user_id, t.assignee_id) where u.status <> 'active'`)).toBe(0);
    expect(await count(`select count(distinct status) as n from tasks`)).toBe(4);
    expect(await count(`select count(*) as n from security_events where type = 'task_created' and actor_type = 'cli' and details @> '{"seeded": true}'`)).toBe(1234);
    const key = await cli('api-keys', 'create', '--name', 'task reader', '--permissions', 'tasks.list');
    const { app } = createTestApp(database.db);
    const page = await request(app).get('/tasks?search=ecole&limit=200').set('x-api-key', key.stdout.trim());
    expect(page.status, page.text).toBe(200);
    expect(page.body.data.length).toBeGreaterThan(10); // one title in 12 names the école
    expect(page.body.data.every((t: { title: string }) => t.title.includes('école'))).toBe(true);
  });

  it('seed refuses to seed nothing, and meetings or tasks when there is nobody to make them for', { timeout: budget({ cliRun: 3 }) }, async () => {
    const nothing = await cli('seed');
    expect(nothing.status).toBe(1);
    expect(nothing.stderr).toContain('say what to seed');
    const empty = await createTestDatabase();
    try {
      const { stdout, stderr } = await runCli(['seed', '--meetings', '10'], { databaseUrl: empty.url, env: { NODE_ENV: 'development' } });
      expect(stdout).toBe('');
      expect(stderr).toContain('seed users first');
      expect(Number((await sql<{ n: string }>`select count(*) as n from meetings`.execute(empty.db)).rows[0]!.n)).toBe(0);
      const tasks = await runCli(['seed', '--tasks', '10'], { databaseUrl: empty.url, env: { NODE_ENV: 'development' } });
      expect(tasks.stderr).toContain('seed users first');
      expect(Number((await sql<{ n: string }>`select count(*) as n from tasks`.execute(empty.db)).rows[0]!.n)).toBe(0);
    } finally {
      await empty.destroy();
    }
  });
});
