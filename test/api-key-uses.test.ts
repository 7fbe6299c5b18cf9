// Usage-limited keys and key metadata on real PostgreSQL (docs/PARTNER-KEYS.md, "Usage limits",
// "Metadata"): uses spent one per admitted request, counted down in RateLimit, 429
// api_key_uses_exhausted at zero (Retry-After until a refill), the refill at a period's start by the
// injectable clock, who may raise a key's uses, the bounds of metadata; and the attacks across
// three service instances on one database, each holding the key in memory.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { digestTables } from './support/table-digest.js';
import { ManualClock } from '../src/clock.js';
import { ApiKeyService, type KeyInput } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { digestSecret } from '../src/auth/secrets/secrets.js';
import { secondInstance } from './support/second-instance.js';
import { LEASE_FLOOR, LEASE_LIFE_MS, spendKeyUses } from '../src/api-keys/uses.js';
import { answersOnceHeard, HEARD_DEADLINE_MS, heardBudget } from './support/key-cache.js';

let database: TestDatabase;
let admin: { id: string };
beforeAll(async () => {
  database = await createTestDatabase();
  admin = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] });
});
afterAll(() => database.destroy());

async function keyWith(clock: ManualClock, fields: Partial<KeyInput>, permissions = ['users.list']) {
  const keys = new ApiKeyService({ db: database.db, clock });
  const draft = keys.draft(OPERATOR, { name: `uses-${Math.random().toString(36).slice(2, 10)}`, permissions, ...fields });
  const { key, secret } = await database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
  return { id: key.id, secret, key };
}

type Instance = Awaited<ReturnType<typeof secondInstance>>;

/** Waits until `made` has heard a notification after the `before`-th (HEARD_DEADLINE_MS at most, then fails). */
async function heardBy(made: Instance, before: number) {
  const until = Date.now() + HEARD_DEADLINE_MS;
  while (made.services.keyCache.state().notifications <= before) {
    if (Date.now() > until) throw new Error(`no notification heard within ${HEARD_DEADLINE_MS} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/**
 * `n` service instances on the test database, each with its own pool and its key cache in step
 * (as processes behind a load balancer), one clock for all: made before the block's tests, stopped
 * after them (their leases given back first, as at shutdown).
 */
function instancesInStep(n: number, clock: ManualClock): Instance[] {
  const made: Instance[] = [];
  beforeAll(async () => {
    for (let i = 0; i < n; i++) {
      const instance = await secondInstance(database.url, { clock });
      instance.services.keyCache.start(database.url);
      await instance.services.keyCache.inStep(HEARD_DEADLINE_MS);
      made.push(instance);
    }
  });
  afterAll(async () => {
    for (const instance of made) {
      await instance.services.keyUses.stop();
      await instance.services.keyCache.stop();
      await instance.close();
    }
  });
  return made;
}

describe('a usage-limited key', () => {
  it('is admitted exactly its remaining uses, counted down in RateLimit, then refused with 429 api_key_uses_exhausted and no Retry-After (never refilled)', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { remaining_uses: 3 });
    expect(key.key.uses_remaining).toBe(3);
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
      expect(res.status).toBe(200);
      expectContractResponse(res, 'GET', '/users');
      seen.push(res.headers['ratelimit'] as string);
      expect(res.headers['ratelimit-policy']).toBeUndefined();
    }
    expect(seen).toEqual(['"api-key-uses";r=2', '"api-key-uses";r=1', '"api-key-uses";r=0']);
    for (let i = 0; i < 3; i++) {
      const refused = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
      expect(refused.status).toBe(429);
      expect(refused.body.code).toBe('api_key_uses_exhausted');
      expect(refused.headers['retry-after']).toBeUndefined();
      expect(refused.headers['ratelimit']).toBe('"api-key-uses";r=0');
      expectContractResponse(refused, 'GET', '/users');
    }
    const row = await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.remaining).toBe(0);
  });

  it('a request refused for another reason (its permission, its rate limit) spends no use', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:05.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { remaining_uses: 5, rate_limit: { requests: 2, per_seconds: 60 } });
    expect((await request(app).get('/roles').set('x-api-key', key.secret)).status).toBe(403);
    const first = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect(first.status).toBe(200);
    // The rate limit counted the 403 (it is decided before the permission); the uses did not.
    expect(first.headers['ratelimit']).toBe('"api-key";r=0;t=55, "api-key-uses";r=4');
    expect(first.headers['ratelimit-policy']).toBe('"api-key";q=2;w=60');
    expectContractResponse(first, 'GET', '/users');
    const limited = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    const row = await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.remaining).toBe(4);
  });

  it('a key without the limit costs no statement of its own and carries no uses header', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, {});
    const res = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit']).toBeUndefined();
    expect(key.key.uses_remaining).toBeNull();
  });
});

describe('a refilled key at the period boundary (the injectable clock)', () => {
  it('daily: the last use of a day, refused until midnight UTC with Retry-After to it, then exactly the amount again, not more', async () => {
    const clock = new ManualClock(new Date('2026-12-14T23:59:58.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { remaining_uses: 2, uses_refill: { interval: 'daily', amount: 3 } });
    const get = () => request(app).get('/users?limit=1').set('x-api-key', key.secret);
    const first = await get();
    expect(first.headers['ratelimit-policy']).toBe('"api-key-uses";q=3;w=86400');
    expect(first.headers['ratelimit']).toBe('"api-key-uses";r=1;t=2');
    expectContractResponse(first, 'GET', '/users');
    expect((await get()).status).toBe(200);
    clock.advance(1_999); // 23:59:59.999: the same day
    const refused = await get();
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toMatchObject({ code: 'api_key_uses_exhausted', retry_after: 1 });
    clock.advance(1); // midnight: the new day's uses
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await get()).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    // Read as of now: 0 left; the next day reads as refilled before any request spends.
    const { app: people } = createAppWithTestBearer(database.db, clock);
    expect((await request(people).get(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id))).body.remaining_uses).toBe(0);
    clock.advance(86_400_000);
    const read = await request(people).get(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
    expect(read.body).toMatchObject({ remaining_uses: 3, uses_refill: { interval: 'daily', amount: 3 } });
    expectContractResponse(read, 'GET', '/api-keys/{id}');
  });

  it('monthly: refilled once on the first of the month, however many requests race at its first instant; sets the count, does not add to it', async () => {
    const clock = new ManualClock(new Date('2027-01-31T23:59:59.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { remaining_uses: 10, uses_refill: { interval: 'monthly', amount: 4 } });
    const get = () => request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect((await get()).headers['ratelimit']).toBe('"api-key-uses";r=9;t=1');
    clock.advance(1000); // 2027-02-01T00:00:00Z
    const answers = await Promise.all(Array.from({ length: 12 }, () => get()));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(4);
    expect(answers.filter((r) => r.status === 429).every((r) => r.body.code === 'api_key_uses_exhausted' && r.headers['retry-after'] === String(28 * 86_400))).toBe(true);
  });
});

describe('who may raise a key\'s uses (docs/AUTH.md)', () => {
  async function setUp(fields: Partial<KeyInput> = { remaining_uses: 100, uses_refill: { interval: 'monthly', amount: 100 } }) {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const { app } = createAppWithTestBearer(database.db, clock);
    const manager = await makeUser(database.db, { roleIds: [(await makeRole(database.db, ['api_keys.manage'])).id] });
    const key = await keyWith(clock, fields);
    const patch = (body: object, who = manager.id) => request(app).patch(`/api-keys/${key.id}`).set('authorization', testBearer(who)).send(body);
    return { key, patch };
  }

  it('a manager who does not hold the key\'s permissions cannot give it more uses: 403 target_outranks_caller, nothing changed', async () => {
    const { patch } = await setUp();
    const before = await digestTables(database.db, ['api_keys', 'api_key_uses']);
    for (const body of [
      { remaining_uses: 101 },
      { remaining_uses: null },
      { uses_refill: { interval: 'monthly', amount: 101 } },
      { uses_refill: { interval: 'daily', amount: 100 } },
      { remaining_uses: 50, uses_refill: { interval: 'daily', amount: 1 } },
    ]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['users.list'] });
      expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    }
    expect(await digestTables(database.db, ['api_keys', 'api_key_uses'])).toEqual(before);
  });

  it('nor limit an unlimited key and then raise it: limiting it is allowed, raising it again is not', async () => {
    const { patch } = await setUp({});
    const limited = await patch({ remaining_uses: 10 });
    expect(limited.status).toBe(200);
    expect(limited.body.remaining_uses).toBe(10);
    expect((await patch({ remaining_uses: 11 })).status).toBe(403);
    expect((await patch({ uses_refill: { interval: 'daily', amount: 1 } })).status).toBe(403);
  });

  it('the same manager may take uses away (fewer, a smaller or rarer refill, none), and may set metadata', async () => {
    const { key, patch } = await setUp();
    const res = await patch({ remaining_uses: 40, uses_refill: { interval: 'monthly', amount: 50 }, metadata: { plan: 'trial' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ remaining_uses: 40, uses_refill: { interval: 'monthly', amount: 50 }, metadata: { plan: 'trial' } });
    expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    expect((await patch({ uses_refill: null })).body).toMatchObject({ remaining_uses: 40, uses_refill: null });
    const event = await sql<{ changes: unknown }>`select changes from security_events where type = 'api_key_updated' and target_id = ${key.id} order by occurred_at, id limit 1`.execute(database.db);
    expect(event.rows[0]!.changes).toEqual({
      before: { remaining_uses: 100, uses_refill: '100/monthly', metadata: null },
      after: { remaining_uses: 40, uses_refill: '50/monthly', metadata: { plan: 'trial' } },
    });
  });

  it('an administrator may raise them, or remove the limit; the journal shows before and after', async () => {
    const { key, patch } = await setUp();
    const res = await patch({ remaining_uses: null }, admin.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ remaining_uses: null, uses_refill: null });
    expect(await database.db.selectFrom('api_key_uses').selectAll().where('api_key_id', '=', key.id).execute()).toEqual([]);
    const event = await sql<{ changes: unknown }>`select changes from security_events where type = 'api_key_updated' and target_id = ${key.id}`.execute(database.db);
    expect(event.rows[0]!.changes).toEqual({ before: { remaining_uses: 100, uses_refill: '100/monthly' }, after: { remaining_uses: null, uses_refill: null } });
  });

  it('a refill without uses is a 400 that writes nothing', async () => {
    const { patch } = await setUp({});
    const before = await digestTables(database.db, ['api_keys', 'api_key_uses']);
    const res = await patch({ uses_refill: { interval: 'daily', amount: 5 } }, admin.id);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toMatchObject({ location: 'request/body/uses_refill', error_code: 'refill_without_uses' });
    expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    expect(await digestTables(database.db, ['api_keys', 'api_key_uses'])).toEqual(before);
  });
});

describe('security: a stale read of a usage-limited key written back', () => {
  it('an administrator reads the key, partners spend uses, the read is sent back with its ETag: 412, the spent uses are not given back', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = await keyWith(clock, { remaining_uses: 10 });
    const use = async () => expect((await request(app).get('/users?limit=1').set('x-api-key', key.secret)).status).toBe(200);
    // A first use, its time recorded (the key's last use is written at most once a minute): the
    // uses after it change nothing of the key but its count.
    await use();
    for (let i = 0; !(await database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow()).last_used_at; i++) {
      if (i > 800) throw new Error('the first use was never recorded');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const read = await request(app).get(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
    expect(read.status).toBe(200);
    expect(read.body.remaining_uses).toBe(9);
    await use();
    await use();
    const { name, remaining_uses } = read.body;
    const written = await request(app).patch(`/api-keys/${key.id}`).set({ authorization: testBearer(admin.id), 'if-match': read.headers.etag }).send({ name, remaining_uses });
    expect(written.status, written.text).toBe(412);
    const row = await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.remaining).toBe(7);
    // Read again, the ETag names the count now: the same write goes through, as asked.
    const again = await request(app).get(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
    expect(again.headers.etag).not.toBe(read.headers.etag);
    expect(again.body.remaining_uses).toBe(7);
  });
});

describe('security: a stale read written back while a partner\'s spend is in flight', () => {
  it('another process\'s spend holds the uses row when the If-Match is checked: the write must be a 412, not set the count back over the uses just spent', async () => {
    const clock = new ManualClock(new Date('2026-12-14T11:00:00.000Z'));
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = await keyWith(clock, { remaining_uses: 10 });
    // A first use, its time recorded: the uses after it change nothing of the key but its count.
    expect((await request(app).get('/users?limit=1').set('x-api-key', key.secret)).status).toBe(200);
    for (let i = 0; !(await database.db.selectFrom('api_keys').select('last_used_at').where('id', '=', key.id).executeTakeFirstOrThrow()).last_used_at; i++) {
      if (i > 800) throw new Error('the first use was never recorded');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const read = await request(app).get(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id));
    expect(read.body.remaining_uses).toBe(9);
    // Another instance's spend statement for a burst of 3, executed and not yet committed.
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let spent!: () => void;
    const isSpent = new Promise<void>((r) => (spent = r));
    const partners = database.db.transaction().execute(async (trx) => {
      const decisions = await spendKeyUses(trx, key.id, 3, clock.now());
      expect(decisions.every((d) => d.allowed)).toBe(true);
      spent();
      await committing;
    });
    await isSpent;
    const { name, remaining_uses } = read.body;
    const writing = request(app).patch(`/api-keys/${key.id}`).set({ authorization: testBearer(admin.id), 'if-match': read.headers.etag }).send({ name, remaining_uses }).then((r) => r);
    for (let i = 0; ; i++) {
      const { rows } = await database.pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      if (rows[0]!.n > 0) break;
      if (i > 400) throw new Error('the write never waited on the uses row');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    commit();
    await partners;
    const written = await writing;
    expect(written.status, written.text).toBe(412);
    const row = await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', key.id).executeTakeFirstOrThrow();
    expect(row.remaining).toBe(6);
  });
});

describe('security: a key\'s limit removed while its requests wait', () => {
  it('an administrator removes the limit while a partner\'s request waits on the uses row: the request is admitted as unlimited, not refused 429 with uses it no longer counts', async () => {
    const clock = new ManualClock(new Date('2026-12-14T12:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { remaining_uses: 5 });
    // The removal (PATCH remaining_uses: null, as setKeyUses writes it), written and not yet committed.
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let removed!: () => void;
    const isRemoved = new Promise<void>((r) => (removed = r));
    const removal = database.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('api_key_uses').where('api_key_id', '=', key.id).execute();
      removed();
      await committing;
    });
    await isRemoved;
    const asking = request(app).get('/users?limit=1').set('x-api-key', key.secret).then((r) => r);
    for (let i = 0; ; i++) {
      const { rows } = await database.pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      if (rows[0]!.n > 0) break;
      if (i > 400) throw new Error('the spend never waited on the uses row');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    commit();
    await removal;
    const res = await asking;
    expect(res.status, res.text).toBe(200);
    expect(res.headers['ratelimit'] ?? '').not.toContain('api-key-uses');
  });
});

describe('metadata', () => {
  it('is stored as sent, returned when the key is read (its keys never inflected), and bounded: too large or too deep is a 400 that writes nothing', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:00:00.000Z'));
    const { app } = createAppWithTestBearer(database.db, clock);
    const metadata = { customer_id: 'cus_8421', nested: { plan_name: 'growth', tags: ['a', 'b'] } };
    const created = await request(app).post('/api-keys').set('authorization', testBearer(admin.id)).send({ name: `meta-${Date.now()}`, permissions: ['users.list'], metadata });
    expect(created.status, created.text).toBe(201);
    expectContractResponse(created, 'POST', '/api-keys');
    expect(created.body.api_key.metadata).toEqual(metadata);
    const camel = await request(app).get(`/api-keys/${created.body.api_key.id}`).set('authorization', testBearer(admin.id)).set('x-api-inflection', 'camel');
    expect(camel.body.metadata).toEqual(metadata);

    const before = await digestTables(database.db, ['api_keys', 'api_key_uses']);
    const tooLarge = { blob: 'x'.repeat(4100) };
    const tooDeep = { a: { b: { c: { d: { e: { f: 1 } } } } } };
    for (const [body, code] of [
      [{ metadata: tooLarge }, 'metadata_too_large'],
      [{ metadata: tooDeep }, 'metadata_too_deep'],
    ] as const) {
      const res = await request(app).patch(`/api-keys/${created.body.api_key.id}`).set('authorization', testBearer(admin.id)).send(body);
      expect(res.status).toBe(400);
      expect(res.body.errors[0]).toMatchObject({ location: 'request/body/metadata', error_code: code });
      expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    }
    const notObject = await request(app).patch(`/api-keys/${created.body.api_key.id}`).set('authorization', testBearer(admin.id)).send({ metadata: ['a'] });
    expect(notObject.status).toBe(400);
    expect(await digestTables(database.db, ['api_keys', 'api_key_uses'])).toEqual(before);
    const fine = { a: { b: { c: { d: { e: 1 } } } } };
    expect((await request(app).patch(`/api-keys/${created.body.api_key.id}`).set('authorization', testBearer(admin.id)).send({ metadata: fine })).body.metadata).toEqual(fine);
  });
});

describe('security: metadata PostgreSQL cannot store', () => {
  it('a partner sends metadata holding half a surrogate pair, as a value or a key: 400 lone_surrogate, not a 500, nothing written', async () => {
    const { app } = createAppWithTestBearer(database.db, new ManualClock(new Date('2026-12-14T10:00:00.000Z')));
    const key = await keyWith(new ManualClock(new Date('2026-12-14T10:00:00.000Z')), {});
    const before = await digestTables(database.db, ['api_keys', 'api_key_uses']);
    for (const metadata of ['{"a":"\\ud800"}', '{"\\udfff":1}', '{"a":{"b":["x\\ud83d"]}}']) {
      for (const [method, path, body] of [
        ['post', '/api-keys', `{"name":"lone-${Math.random().toString(36).slice(2, 10)}","permissions":["users.list"],"metadata":${metadata}}`],
        ['patch', `/api-keys/${key.id}`, `{"metadata":${metadata}}`],
      ] as const) {
        const res = await request(app)[method](path).set('authorization', testBearer(admin.id)).set('content-type', 'application/json').send(body);
        expect(res.status, `${method} ${metadata}: ${res.text}`).toBe(400);
        expect(res.body.errors[0]).toMatchObject({ location: 'request/body/metadata', error_code: 'lone_surrogate' });
        expectContractResponse(res, method.toUpperCase(), method === 'post' ? '/api-keys' : '/api-keys/{id}');
      }
    }
    expect(await digestTables(database.db, ['api_keys', 'api_key_uses'])).toEqual(before);
    // A whole pair (an emoji) is one character, and kept.
    const emoji = await request(app).patch(`/api-keys/${key.id}`).set('authorization', testBearer(admin.id)).send({ metadata: { mood: '\u{1F600}' } });
    expect(emoji.status, emoji.text).toBe(200);
    expect(emoji.body.metadata).toEqual({ mood: '\u{1F600}' });
  });
});

describe('security: a usage-limited key spent from three service instances at once', () => {
  const clock = new ManualClock(new Date('2027-03-10T12:00:00.000Z'));
  const three = instancesInStep(3, clock);

  /** `perInstance` requests sent to each instance at once; the statuses, and the headers of the admitted ones. */
  async function burst(secret: string, perInstance: number) {
    const answers = await Promise.all(three.flatMap((made) => Array.from({ length: perInstance }, () => request(made.app).get('/users?limit=1').set('x-api-key', secret))));
    return { admitted: answers.filter((r) => r.status === 200), refused: answers.filter((r) => r.status !== 200) };
  }

  /** A key with these uses that every instance holds in memory (so the test is of the cached path). */
  async function heldEverywhere(fields: Partial<KeyInput>) {
    const key = await keyWith(clock, { remaining_uses: 1_000_000 });
    for (const made of three) {
      await answersOnceHeard(() => request(made.app).get('/users?limit=1').set('x-api-key', key.secret), 200);
      expect(made.services.keyCache.holds(digestSecret(key.secret))).toBe(true);
    }
    await new ApiKeyService({ db: database.db, clock }).update(OPERATOR, key.id, fields);
    return key;
  }

  const remaining = async (id: string) => (await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', id).executeTakeFirstOrThrow()).remaining;

  it('30 uses, 60 concurrent requests over three instances: exactly 30 admitted, each remaining count told once, the rest 429 api_key_uses_exhausted', { timeout: heardBudget(3) }, async () => {
    const key = await heldEverywhere({ remaining_uses: 30 });
    const { admitted, refused } = await burst(key.secret, 20);
    expect(admitted).toHaveLength(30);
    expect(refused.every((r) => r.status === 429 && r.body.code === 'api_key_uses_exhausted')).toBe(true);
    const told = admitted.map((r) => Number(/"api-key-uses";r=(\d+)/.exec(r.headers['ratelimit'] as string)![1])).sort((a, b) => a - b);
    expect(told).toEqual(Array.from({ length: 30 }, (_, i) => i));
    expect(await remaining(key.id)).toBe(0);
  });

  it('the last use, raced by 15 requests over three instances: exactly one admitted', { timeout: heardBudget(3) }, async () => {
    for (let round = 0; round < 5; round++) {
      const key = await heldEverywhere({ remaining_uses: 1 });
      const { admitted } = await burst(key.secret, 5);
      expect(admitted).toHaveLength(1);
      expect(admitted[0]!.headers['ratelimit']).toBe('"api-key-uses";r=0');
    }
  });

  it('a key at zero is refused at every instance, whichever held it in memory, and a key made limited while held as unlimited is counted once each has heard it', { timeout: heardBudget(6) }, async () => {
    const zero = await heldEverywhere({ remaining_uses: 0 });
    for (const made of three) {
      const res = await request(made.app).get('/users?limit=1').set('x-api-key', zero.secret);
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('api_key_uses_exhausted');
    }
    // Unlimited and held in memory everywhere; then limited to 2 uses.
    const key = await keyWith(clock, {});
    for (const made of three) await answersOnceHeard(() => request(made.app).get('/users?limit=1').set('x-api-key', key.secret), 200);
    const heard = three.map((made) => made.services.keyCache.state().notifications);
    await new ApiKeyService({ db: database.db, clock }).update(OPERATOR, key.id, { remaining_uses: 2 });
    for (const [i, made] of three.entries()) await heardBy(made, heard[i]!);
    const { admitted } = await burst(key.secret, 4);
    expect(admitted).toHaveLength(2);
  });

  it('the refill at the day boundary, raced over three instances: none before midnight UTC, exactly the amount after, the next day again exactly the amount', { timeout: heardBudget(3) }, async () => {
    clock.set(new Date('2027-03-10T23:59:59.990Z'));
    const key = await heldEverywhere({ remaining_uses: 0, uses_refill: { interval: 'daily', amount: 5 } });
    const before = await burst(key.secret, 4);
    expect(before.admitted).toHaveLength(0);
    expect(before.refused.every((r) => r.headers['retry-after'] === '1')).toBe(true);
    clock.set(new Date('2027-03-11T00:00:00.000Z'));
    const after = await burst(key.secret, 4);
    expect(after.admitted).toHaveLength(5);
    expect(after.refused.every((r) => r.body.code === 'api_key_uses_exhausted' && r.headers['retry-after'] === '86400')).toBe(true);
    clock.set(new Date('2027-03-11T23:59:59.999Z'));
    expect((await burst(key.secret, 2)).admitted).toHaveLength(0);
    clock.set(new Date('2027-03-12T00:00:00.000Z'));
    expect((await burst(key.secret, 4)).admitted).toHaveLength(5);
    expect(await remaining(key.id)).toBe(0);
  });
});

describe('leases of uses: three instances in step, each spending from uses it took ahead', () => {
  const clock = new ManualClock(new Date('2027-04-10T12:00:00.000Z'));
  const three = instancesInStep(3, clock);

  const remaining = async (id: string) => (await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', id).executeTakeFirstOrThrow()).remaining;
  const giveBackAll = () => Promise.all(three.map((made) => made.services.keyUses.giveBackAll()));

  /** `rounds` waves of `perInstance` requests to each instance at once (or until a wave is refused everywhere): how many were admitted. */
  async function waves(secret: string, rounds: number, perInstance = 1) {
    let admitted = 0;
    for (let round = 0; round < rounds; round++) {
      const answers = await Promise.all(three.flatMap((made) => Array.from({ length: perInstance }, () => request(made.app).get('/users?limit=1').set('x-api-key', secret))));
      const ok = answers.filter((r) => r.status === 200).length;
      expect(answers.every((r) => r.status === 200 || (r.status === 429 && r.body.code === 'api_key_uses_exhausted'))).toBe(true);
      admitted += ok;
      if (ok === 0) break;
    }
    return admitted;
  }
  const untilRefusedEverywhere = (secret: string) => waves(secret, 10_000, 10);

  /**
   * Waves of one request per instance until the key's row shows uses held by leases (fewer left
   * than were admitted from it): how many were admitted. A lease lives LEASE_LIFE_MS of real time,
   * so on a busy machine the one taken may be given back before it is seen: the waves go on until
   * one is (1,000 at most, then it fails: the uses are not taken ahead).
   */
  async function untilLeaseHeld(key: { id: string; secret: string }, count: number, round = () => waves(key.secret, 1)) {
    let admitted = 0;
    for (let i = 0; i < 1_000; i++) {
      admitted += await round();
      if ((await remaining(key.id)) < count - admitted) return admitted;
    }
    throw new Error(`no use taken ahead after ${admitted} admitted`);
  }

  it('under sustained use the uses are taken ahead, not one statement per request; given back, admitted and remaining add up to the count exactly', { timeout: heardBudget(3) }, async () => {
    const key = await keyWith(clock, { remaining_uses: 10_000 });
    const admitted = await untilLeaseHeld(key, 10_000);
    await giveBackAll();
    expect(await remaining(key.id)).toBe(10_000 - admitted);
  });

  it(`security: a partner drains a key past its last use over three instances holding leases: exactly the count admitted, the last ${LEASE_FLOOR} spent one by one`, { timeout: heardBudget(6) }, async () => {
    const count = LEASE_FLOOR + 200;
    const key = await keyWith(clock, { remaining_uses: count });
    const admitted = await untilRefusedEverywhere(key.secret);
    expect(admitted).toBe(count);
    expect(await remaining(key.id)).toBe(0);
    await giveBackAll();
    expect(await remaining(key.id)).toBe(0);
  });

  it('security: an administrator cuts a key\'s uses while the instances hold leases: once heard, no lease is spent, and none is given back into the new count', { timeout: heardBudget(6) }, async () => {
    const key = await keyWith(clock, { remaining_uses: 1_000_000 });
    await untilLeaseHeld(key, 1_000_000);
    const heard = three.map((made) => made.services.keyCache.state().notifications);
    await new ApiKeyService({ db: database.db, clock }).update(OPERATOR, key.id, { remaining_uses: 5 });
    for (const [i, made] of three.entries()) await heardBy(made, heard[i]!);
    expect(await untilRefusedEverywhere(key.secret)).toBe(5);
    await giveBackAll();
    expect(await remaining(key.id)).toBe(0);
  });

  it('a lease taken before a refill is not spent after it: the day\'s amount exactly, whatever was held at midnight, and nothing of it given back into the new day', { timeout: heardBudget(6) }, async () => {
    const amount = LEASE_FLOOR + 100;
    clock.set(new Date('2027-04-10T23:59:00.000Z'));
    const key = await keyWith(clock, { remaining_uses: amount, uses_refill: { interval: 'daily', amount } });
    await untilLeaseHeld(key, amount);
    clock.set(new Date('2027-04-11T00:00:00.000Z'));
    expect(await untilRefusedEverywhere(key.secret)).toBe(amount);
    await giveBackAll();
    expect(await remaining(key.id)).toBe(0);
  });

  it('security: an instance whose listening connection is killed stops spending its lease and gives it back; one that never listened takes none', { timeout: heardBudget(6) }, async () => {
    const key = await keyWith(clock, { remaining_uses: 1_000_000 });
    const [deafened] = three;
    let admitted = await untilLeaseHeld(key, 1_000_000, async () => ((await request(deafened!.app).get('/users?limit=1').set('x-api-key', key.secret)).status === 200 ? 1 : 0));
    const pid = deafened!.services.keyCache.state().listenerPid;
    await sql`select pg_terminate_backend(${pid}::int)`.execute(database.db);
    // Until it listens again, its next request is spent in the database and its lease goes back.
    await expect.poll(() => deafened!.services.keyCache.state().listenerPid !== pid || !deafened!.services.keyCache.state().inStep, { timeout: HEARD_DEADLINE_MS }).toBe(true);
    if (!deafened!.services.keyCache.state().inStep) {
      expect((await request(deafened!.app).get('/users?limit=1').set('x-api-key', key.secret)).status).toBe(200);
      admitted++;
      await expect.poll(() => remaining(key.id), { timeout: HEARD_DEADLINE_MS }).toBe(1_000_000 - admitted);
    }
    await deafened!.services.keyCache.inStep(HEARD_DEADLINE_MS);
    await giveBackAll();
    expect(await remaining(key.id)).toBe(1_000_000 - admitted);

    // An instance that never listened (the embedded database, a pooler in transaction mode).
    const deaf = await secondInstance(database.url, { clock });
    try {
      const other = await keyWith(clock, { remaining_uses: 1_000_000 });
      for (let i = 0; i < 40; i++) expect((await request(deaf.app).get('/users?limit=1').set('x-api-key', other.secret)).status).toBe(200);
      expect(await remaining(other.id)).toBe(1_000_000 - 40);
    } finally {
      await deaf.services.keyUses.stop();
      await deaf.close();
    }
  });
});

describe('security: attacks on leases of uses, at their edges', () => {
  // Two instances: A is the one that holds a lease; B is another process. One manual clock for both (moved by some tests).
  const clock = new ManualClock(new Date('2027-05-10T12:00:00.000Z'));
  const pair = instancesInStep(2, clock);
  let a: Instance;
  let b: Instance;
  beforeAll(() => ([a, b] = pair as [Instance, Instance]));

  const remaining = async (id: string) => (await database.db.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', id).executeTakeFirstOrThrow()).remaining;
  /** What an instance's spender holds of a key's lease now (its private map, read for the proof). */
  const held = (made: Instance, id: string) => (made.services.keyUses as unknown as { leases: Map<string, { left: number }> }).leases.get(id)?.left ?? 0;
  const ask = (made: Instance, secret: string) => request(made.app).get('/users?limit=1').set('x-api-key', secret);
  const told = (res: { headers: Record<string, unknown> }) => Number(/"api-key-uses";r=(\d+)/.exec(res.headers['ratelimit'] as string)![1]);
  /**
   * Requests one after the other at `made`, 40 at least (its leases double 2, 4, ..., 32: it holds
   * 28 after them), until it holds a lease of more than one use: how many were admitted. A lease
   * lives LEASE_LIFE_MS of real time, so on a busy machine the one taken may be given back first:
   * the requests go on until one is held (1,000 at most, then it fails).
   */
  async function leaseAt(made: Instance, secret: string, id: string) {
    let admitted = 0;
    while (admitted < 40 || held(made, id) <= 1) {
      if (admitted >= 1_000) throw new Error(`no lease held after ${admitted} requests`);
      expect((await ask(made, secret)).status).toBe(200);
      admitted++;
    }
    return admitted;
  }
  async function untilRefused(made: Instance, secret: string) {
    let admitted = 0;
    for (let i = 0; i < 10_000; i++) {
      const res = await ask(made, secret);
      if (res.status !== 200) {
        expect(res.body.code).toBe('api_key_uses_exhausted');
        break;
      }
      admitted++;
    }
    return admitted;
  }

  it(`security: a lease told a partner the row's count at its take, frozen: once another process drained the row, no answer is told more than exists for longer than LEASE_LIFE_MS (${LEASE_LIFE_MS} ms)`, { timeout: heardBudget(2) }, async () => {
    const count = LEASE_FLOOR + 500;
    const key = await keyWith(clock, { remaining_uses: count });
    const admitted = await leaseAt(a, key.secret, key.id);
    const holds = held(a, key.id);
    // Another process's statement for a burst of requests waiting on the key (what B's drain runs, up to 1,000 at once): the row is spent to 0.
    let drained = 0;
    for (let left = await remaining(key.id); left > 0; left = await remaining(key.id)) drained += (await spendKeyUses(database.db, key.id, Math.min(left, 1000), clock.now())).filter((d) => d.allowed).length;
    await new Promise((r) => setTimeout(r, LEASE_LIFE_MS));
    // The lease has had its life: the next answer is the database's, which knows only what A held.
    const next = await ask(a, key.secret);
    if (next.status === 200) expect(told(next)).toBeLessThan(holds);
    else expect(next.body.code).toBe('api_key_uses_exhausted');
    await a.services.keyUses.giveBackAll();
    expect(await remaining(key.id)).toBe(count - admitted - drained - (next.status === 200 ? 1 : 0));
  });

  it(`security: a process asked now and then keeps its lease no longer than LEASE_LIFE_MS while another process refuses the key 429: then the uses go back and the other admits`, { timeout: heardBudget(3) }, async () => {
    const key = await keyWith(clock, { remaining_uses: LEASE_FLOOR + 500 });
    await leaseAt(a, key.secret, key.id);
    for (let left = await remaining(key.id); left > 0; left = await remaining(key.id)) await spendKeyUses(database.db, key.id, Math.min(left, 1000), clock.now());
    // The row is spent: B refuses while A holds uses.
    const holds = held(a, key.id);
    expect(holds).toBeGreaterThan(1);
    expect((await ask(b, key.secret)).status).toBe(429);
    // A trickle at A (one request a round, 200 ms apart: the key keeps being asked there), and the
    // partner at B. A keeping its lease for as long as it is asked would spend it all there, B never admitted.
    const rounds: { a: number; b: number }[] = [];
    while (!rounds.some((r) => r.b === 200) && rounds.filter((r) => r.a === 200).length < holds) {
      const atA = await ask(a, key.secret);
      await new Promise((r) => setTimeout(r, 200));
      const atB = await ask(b, key.secret);
      rounds.push({ a: atA.status, b: atB.status });
    }
    expect(rounds.some((r) => r.b === 200), JSON.stringify(rounds)).toBe(true);
    expect(rounds.filter((r) => r.a === 200).length, JSON.stringify(rounds)).toBeLessThan(holds);
  });

  it('security: a PATCH of only the refill settings (no count sent, the journal shows the count unchanged) must not throw away the uses every process leased', { timeout: heardBudget(2) }, async () => {
    const key = await keyWith(clock, { remaining_uses: 1_000_000 });
    const admitted = await leaseAt(a, key.secret, key.id);
    const heard = a.services.keyCache.state().notifications;
    const shown = await new ApiKeyService({ db: database.db, clock }).update(OPERATOR, key.id, { uses_refill: { interval: 'monthly', amount: 1_000_000 } });
    await heardBy(a, heard);
    await a.services.keyUses.giveBackAll();
    // Nobody set the count: it is the count less the requests admitted, as it would be without leases.
    expect(await remaining(key.id), `the PATCH answered remaining_uses=${shown.uses_remaining}`).toBe(1_000_000 - admitted);
  });

  it('security: a limit removed and re-added (the clock set back to the instant the key was made): a lease of the old row must not be given back into the count a person just set', { timeout: heardBudget(4) }, async () => {
    clock.set(new Date('2027-05-10T12:00:00.000Z'));
    const made = clock.now();
    const key = await keyWith(clock, { remaining_uses: 1_000_000 });
    clock.advance(60_000);
    await leaseAt(a, key.secret, key.id);
    const service = new ApiKeyService({ db: database.db, clock });
    let heard = a.services.keyCache.state().notifications;
    await service.update(OPERATOR, key.id, { remaining_uses: null });
    await heardBy(a, heard);
    clock.set(made); // set back (a ManualClock that was never moved does the same)
    heard = a.services.keyCache.state().notifications;
    await service.update(OPERATOR, key.id, { remaining_uses: 5 });
    await heardBy(a, heard);
    // A's lease goes back (as it would by itself once a second old).
    await new Promise((r) => setTimeout(r, 1_600));
    await a.services.keyUses.giveBackAll();
    expect(await remaining(key.id)).toBe(5);
    expect(await untilRefused(b, key.secret)).toBe(5);
  });

  it('security: a spend in flight when the spender stops (shutdown) would take a lease after stop() gave back every lease: stop waits for it, its lease goes back, no timer is armed again', { timeout: heardBudget(2) }, async () => {
    const c = await secondInstance(database.url, { clock });
    c.services.keyCache.start(database.url);
    await c.services.keyCache.inStep(HEARD_DEADLINE_MS);
    try {
      const key = await keyWith(clock, { remaining_uses: 1_000_000 });
      // 1 statement (no lease), 1 statement leasing 2, 2 from it: the next statement asks 4 more.
      for (let i = 0; i < 4; i++) expect((await ask(c, key.secret)).status).toBe(200);
      // The uses row held by another transaction, so that the next spend is in flight when stop() runs.
      let release!: () => void;
      const releasing = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = database.db.transaction().execute(async (trx) => {
        await trx.selectFrom('api_key_uses').select('remaining').where('api_key_id', '=', key.id).forUpdate().execute();
        locked();
        await releasing;
      });
      await isLocked;
      const inFlight = c.services.keyUses.spend(key.id);
      for (let i = 0; ; i++) {
        const { rows } = await database.pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
        if (rows[0]!.n > 0) break;
        if (i > 400) throw new Error('the spend never waited on the uses row');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      // Stopping waits for the statement in flight, which waits for the row.
      const stopping = c.services.keyUses.stop();
      release();
      await holder;
      await stopping;
      expect((await inFlight).allowed).toBe(true);
      const heldAfterStop = held(c, key.id);
      const sweepArmedAfterStop = (c.services.keyUses as unknown as { sweep: unknown }).sweep !== undefined;
      // Then as src/main.ts goes on: the key cache stops, the database closes; the sweep's give-back a second later finds it closed.
      await c.services.keyCache.stop();
      await c.close();
      await new Promise((r) => setTimeout(r, 1_600));
      // 5 admitted, nothing else spent.
      expect(await remaining(key.id), `held after stop(): ${heldAfterStop}; sweep armed after stop(): ${sweepArmedAfterStop}; log: ${c.logs.text().split('\n').filter((l) => l.includes('give back')).join(' | ')}`).toBe(1_000_000 - 5);
    } finally {
      await c.services.keyCache.stop();
      await c.close().catch(() => {});
    }
  });
});
