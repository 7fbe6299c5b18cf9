// Safe writes (docs/SAFE-WRITES.md) tried as an attacker and a flaky network would: keys that are
// no keys, a storm where no unique name serializes the creates, a secret sought again through a
// replay, a replay after the caller's rights went, expiry on a controlled clock, a crash between
// the work and the answer, and tags that must not pass on a stale view.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeUser, testBearer } from './support/access-fixtures.js';
import { sql } from 'kysely';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
let adminId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
});
afterAll(() => database.destroy());

const keysNamed = async (name: string) => (await database.db.selectFrom('api_keys').select('id').where('name', '=', name).execute()).length;

describe('security: Idempotency-Key attacks', () => {
  for (const [what, value] of [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab inside', 'a\tb'],
    ['non-ASCII', 'clé-é'],
  ] as const) {
    it(`a key that is ${what} is a 400 and creates nothing`, async () => {
      const { app } = createAppWithTestBearer(database.db);
      const name = `badkey-${randomUUID().slice(0, 8)}`;
      const res = await request(app).post('/api-keys').set('authorization', testBearer(adminId)).set('idempotency-key', value).send({ name, permissions: ['users.list'] });
      expect(res.status).toBe(400);
      expect(res.type).toBe('application/problem+json');
      expect(await keysNamed(name)).toBe(0);
    });
  }

  it('a storm of 50 identical POST /api-keys makes one key and one audit event; the rest replay without the secret or answer 409 with Retry-After', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `storm-${key.slice(0, 8)}`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () => request(app).post('/api-keys').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] })),
    );
    const fresh = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined);
    expect(fresh).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 201 && a !== fresh[0]) {
        expect(a.headers['idempotent-replayed']).toBe('true');
        expect(a.body.secret).toBeNull();
        expect(a.body.api_key.id).toBe(fresh[0]!.body.api_key.id);
      } else if (a.status !== 201) {
        expect(a.status).toBe(409);
        expect(a.headers['retry-after']).toBe('1');
      }
    }
    expect(await keysNamed(name)).toBe(1);
    expect(
      await database.db.selectFrom('security_events').select('id').where('type', '=', 'api_key_created').where('target_id', '=', fresh[0]!.body.api_key.id).execute(),
    ).toHaveLength(1);
  });

  it('a replay of POST /api-keys never shows the secret again, and the secret is nowhere in the stored answers', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const send = () => request(app).post('/api-keys').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name: `secret-${key.slice(0, 8)}`, permissions: ['users.list'] });
    const first = await send();
    expect(first.status).toBe(201);
    expect(typeof first.body.secret).toBe('string');
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.body.secret).toBeNull();
    expect(again.text).not.toContain(first.body.secret);
    const rows = await database.db.selectFrom('idempotency_keys').select(['body', 'headers']).execute();
    for (const r of rows) expect(`${r.body}${JSON.stringify(r.headers)}`).not.toContain(first.body.secret);
    // The same for a rotation.
    const rotateKey = randomUUID();
    const rotate = () => request(app).post(`/api-keys/${first.body.api_key.id}/rotate`).set('authorization', testBearer(adminId)).set('idempotency-key', rotateKey).send({});
    const rotated = await rotate();
    expect(rotated.status).toBe(200);
    const replayed = await rotate();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.secret).toBeNull();
    const after = await database.db.selectFrom('idempotency_keys').select('body').execute();
    for (const r of after) expect(r.body).not.toContain(rotated.body.secret);
  });

  it('a replay after the calling API key was revoked is a 401, and after its permission went a 403, never the stored answer', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const caller = await makeApiKey(database.db, ['roles.manage', 'users.list']);
    const key = randomUUID();
    const name = `rights-${key.slice(0, 8)}`;
    const send = () => request(app).post('/roles').set('x-api-key', caller.secret).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    expect((await send()).status).toBe(201);
    await database.db.updateTable('api_keys').set({ permissions: ['users.list'] }).where('id', '=', caller.id).execute();
    const noRight = await send();
    expect(noRight.status).toBe(403);
    expect(noRight.headers['idempotent-replayed']).toBeUndefined();
    await database.db.updateTable('api_keys').set({ permissions: ['roles.manage', 'users.list'], revoked_at: new Date(Date.now() - 1000) }).where('id', '=', caller.id).execute();
    const revoked = await send();
    expect(revoked.status).toBe(401);
    expect(revoked.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a crash between doing the work and storing its answer leaves neither, and the retry creates exactly once', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `crash-${key.slice(0, 8)}`;
    const send = () => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    // The store of the answer fails after the role and its audit event were written, as a process killed there would.
    await sql`create function crash_on_store() returns trigger language plpgsql as $$ begin raise exception 'crashed'; end $$`.execute(database.db);
    await sql`create trigger crash_on_store before insert on idempotency_keys for each row execute function crash_on_store()`.execute(database.db);
    try {
      const crashed = await send();
      expect(crashed.status).toBe(500);
      expect(crashed.text).not.toContain('crashed');
    } finally {
      await sql`drop trigger crash_on_store on idempotency_keys`.execute(database.db);
      await sql`drop function crash_on_store()`.execute(database.db);
    }
    expect(await database.db.selectFrom('roles').select('id').where('name', '=', name).execute()).toHaveLength(0);
    const retried = await send();
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await send()).headers['idempotent-replayed']).toBe('true');
    expect(await database.db.selectFrom('roles').select('id').where('name', '=', name).execute()).toHaveLength(1);
    expect(await database.db.selectFrom('security_events').select('id').where('type', '=', 'role_created').where('target_label', '=', name).execute()).toHaveLength(1);
  });

  it('a key is free again after 24 hours on a controlled clock (a new creation, not the old answer)', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = randomUUID();
    const target = await makeApiKey(database.db, ['users.list'], { clock });
    const send = () => request(app).post(`/api-keys/${target.id}/rotate`).set('authorization', testBearer(adminId)).set('idempotency-key', key).send({});
    const first = await send();
    expect(first.status).toBe(200);
    clock.advance(24 * 3600 * 1000 - 1000);
    const within = await send();
    expect(within.headers['idempotent-replayed']).toBe('true');
    expect(within.body.api_key.last_characters).toBe(first.body.api_key.last_characters);
    clock.advance(2000);
    const after = await send();
    expect(after.status).toBe(200);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(typeof after.body.secret).toBe('string');
    expect(after.body.secret).not.toBe(first.body.secret);
  });

  it('the same key on another operation is another key; on another path of the same operation it is 422', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const role = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name: `op-${key.slice(0, 8)}`, permissions: ['users.list'] });
    expect(role.status).toBe(201);
    const apiKey = await request(app).post('/api-keys').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name: `op-${key.slice(0, 8)}`, permissions: ['users.list'] });
    expect(apiKey.status).toBe(201);
    expect(apiKey.headers['idempotent-replayed']).toBeUndefined();
    const other = await request(app).post('/api-keys').set('authorization', testBearer(adminId)).send({ name: `op2-${key.slice(0, 8)}`, permissions: ['users.list'] });
    const rot = (id: string) => request(app).post(`/api-keys/${id}/rotate`).set('authorization', testBearer(adminId)).set('idempotency-key', `r-${key}`).send({});
    expect((await rot(apiKey.body.api_key.id)).status).toBe(200);
    const elsewhere = await rot(other.body.api_key.id);
    expect(elsewhere.status).toBe(422);
    expect(elsewhere.body.code).toBe('idempotency_key_reused');
  });
});

describe('security: entity tag attacks', () => {
  it('an If-Match or If-None-Match on an id that does not exist is a 404 (RFC 9110 would say 412; a 404 is what every unknown id answers), for users, roles and API keys', async () => {
    const { app } = createAppWithTestBearer(database.db);
    for (const base of ['/users', '/roles', '/api-keys']) {
      const p = `${base}/${randomUUID()}`;
      for (const tag of ['"stale"', '*']) {
        expect((await request(app).patch(p).set('authorization', testBearer(adminId)).set('if-match', tag).send({ description: 'x' })).status).not.toBe(412);
        expect((await request(app).delete(p).set('authorization', testBearer(adminId)).set('if-match', tag)).status).toBe(404);
        expect((await request(app).get(p).set('authorization', testBearer(adminId)).set('if-none-match', tag)).status).toBe(404);
      }
    }
  });

  it("a role's permissions changed while the clock has not moved since its last write still change its tag, so a stale If-Match fails", async () => {
    // The manual clock stands still: two writes in one millisecond, or a wall clock stepped back.
    const { app } = createAppWithTestBearer(database.db);
    const made = await request(app).post('/roles').set('authorization', testBearer(adminId)).send({ name: `still-${randomUUID().slice(0, 8)}`, permissions: ['users.list'] });
    const path = `/roles/${made.body.id}`;
    const read = await request(app).get(path).set('authorization', testBearer(adminId));
    const widened = await request(app).patch(path).set('authorization', testBearer(adminId)).set('if-match', read.headers.etag as string).send({ permissions: ['users.list', 'users.read'] });
    expect(widened.status).toBe(200);
    expect(widened.body.permissions).toEqual(['users.list', 'users.read']);
    expect(widened.headers.etag).not.toBe(read.headers.etag);
    // The other tab still holds the first tag: its change must not pass on that stale view.
    const stale = await request(app).patch(path).set('authorization', testBearer(adminId)).set('if-match', read.headers.etag as string).send({ description: 'stale view' });
    expect(stale.status).toBe(412);
    expect((await request(app).get(path).set('authorization', testBearer(adminId)).set('if-none-match', read.headers.etag as string)).status).toBe(200);
  });

  it("a use of an API key, and a permission taken from its creator's role, change the key's tag", async () => {
    const { app } = createAppWithTestBearer(database.db);
    const role = await request(app).post('/roles').set('authorization', testBearer(adminId)).send({ name: `cr-${randomUUID().slice(0, 8)}`, permissions: ['users.list', 'users.read', 'api_keys.manage'] });
    const creator = (await makeUser(database.db, { roleIds: [role.body.id] })).id;
    const made = await request(app).post('/api-keys').set('authorization', testBearer(creator)).send({ name: `k-${randomUUID().slice(0, 8)}`, permissions: ['users.list', 'users.read'] });
    expect(made.status).toBe(201);
    const path = `/api-keys/${made.body.api_key.id}`;
    const t0 = (await request(app).get(path).set('authorization', testBearer(creator))).headers.etag as string;
    expect((await request(app).get('/users').set('x-api-key', made.body.secret)).status).toBe(200);
    // The last use is written after the answer, not awaited by it (src/api-keys/authenticator.ts).
    const keyAfterUse = () => request(app).get(path).set('authorization', testBearer(creator));
    await expect.poll(async () => (await keyAfterUse()).body.last_used_at, { timeout: 10_000, interval: 20 }).not.toBeNull();
    const used = await keyAfterUse();
    expect(used.headers.etag).not.toBe(t0);
    const patched = await request(app).patch(`/roles/${role.body.id}`).set('authorization', testBearer(adminId)).send({ permissions: ['users.list', 'api_keys.manage'] });
    expect(patched.status).toBe(200);
    const narrowed = await request(app).get(path).set('authorization', testBearer(creator));
    expect(narrowed.body.effective_permissions).toEqual(['users.list']);
    expect(narrowed.headers.etag).not.toBe(used.headers.etag);
    expect((await request(app).patch(path).set('authorization', testBearer(creator)).set('if-match', used.headers.etag as string).send({ name: 'stale' })).status).toBe(412);
  });

  it('a tag read from one resource replayed in If-Match on another untouched one of the same revision (tag replay across ids): 412, nothing changed', async () => {
    // Two tasks, or two roles, freshly made by one creator share their revision text (row version
    // 1, the same creator): a tag that named only (style, revision) would match both.
    const { app } = createAppWithTestBearer(database.db);
    const as = (r: request.Test) => r.set('authorization', testBearer(adminId));
    const twins = async (base: string, body: () => object) =>
      (await Promise.all([1, 2].map(() => as(request(app).post(base)).send(body())))).map((r) => `${base}/${r.body.id as string}`);
    const cases = [
      { paths: await twins('/tasks', () => ({ title: `twin-${randomUUID().slice(0, 8)}` })), change: { title: 'hijacked' } },
      { paths: await twins('/roles', () => ({ name: `twin-${randomUUID().slice(0, 8)}`, permissions: [] })), change: { description: 'hijacked' } },
    ];
    for (const { paths, change } of cases) {
      const [first, second] = paths as [string, string];
      const readFirst = await as(request(app).get(first));
      const readSecond = await as(request(app).get(second));
      expect(readFirst.status).toBe(200);
      expect(readSecond.headers.etag).not.toBe(readFirst.headers.etag);
      expect((await as(request(app).patch(second)).set('if-match', readFirst.headers.etag as string).send(change)).status).toBe(412);
      expect((await as(request(app).get(second))).body).toEqual(readSecond.body);
      // The tag still opens the resource it was read from.
      expect((await as(request(app).patch(first)).set('if-match', readFirst.headers.etag as string).send(change)).status).toBe(200);
    }
  });

  it('a 304 carries what its 200 would (ETag, Vary, Cache-Control) in every key style', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const path = `/users/${(await makeUser(database.db)).id}`;
    for (const style of ['snake', 'camel', 'pascal', 'dash']) {
      const full = await request(app).get(path).set('authorization', testBearer(adminId)).set('x-api-inflection', style);
      const cached = await request(app).get(path).set('authorization', testBearer(adminId)).set('x-api-inflection', style).set('if-none-match', full.headers.etag as string);
      expect(cached.status).toBe(304);
      expect(cached.headers.vary).toBe(full.headers.vary);
      expect(cached.headers['cache-control']).toBe(full.headers['cache-control']);
      expect(cached.headers.etag).toBe(full.headers.etag);
    }
  });

  it('two concurrent DELETEs of a role with the same If-Match: one deletion, the other 412 or 404', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const role = await request(app).post('/roles').set('authorization', testBearer(adminId)).send({ name: `del-${randomUUID().slice(0, 8)}`, permissions: [] });
    const tag = role.headers.etag as string;
    const answers = await Promise.all([1, 2].map(() => request(app).delete(`/roles/${role.body.id}`).set('authorization', testBearer(adminId)).set('if-match', tag)));
    expect(answers.filter((a) => a.status === 204)).toHaveLength(1);
    expect(answers.filter((a) => a.status !== 204).every((a) => [404, 412].includes(a.status))).toBe(true);
  });
});
