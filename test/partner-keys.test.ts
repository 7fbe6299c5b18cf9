// Partner-grade keys on one process and real PostgreSQL: a key's rate limit (429 rate_limited,
// Retry-After, the draft's RateLimit-Policy / RateLimit headers counting down and resetting), its
// IP allowlist (403 ip_not_allowed naming nothing of the list, refusals recorded at most once a
// minute), who may loosen either (docs/AUTH.md), and the per-person limit on expensive operations.
// Across processes behind nginx: test/partner-keys-balanced.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, authenticatorsWithTestBearer, createAppWithTestBearer, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { ManualClock } from '../src/clock.js';
import { ApiKeyService } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { IP_REFUSAL_RECORD_INTERVAL_MS } from '../src/api-keys/authenticator.js';

let database: TestDatabase;
let admin: { id: string };
beforeAll(async () => {
  database = await createTestDatabase();
  admin = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] });
});
afterAll(() => database.destroy());

/** A clock at the start of a 10-second window, so that a test's requests all fall in it. */
const windowStart = () => new ManualClock(new Date(Math.ceil(Date.now() / 10_000) * 10_000 + 60_000));

async function keyWith(clock: ManualClock, fields: { rate_limit?: { requests: number; per_seconds: number } | null; allowed_ips?: string[] | null }, permissions = ['users.list']) {
  const keys = new ApiKeyService({ db: database.db, clock });
  const draft = keys.draft(OPERATOR, { name: `partner-${Math.random().toString(36).slice(2, 10)}`, permissions, ...fields });
  const { key, secret } = await database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
  return { id: key.id, secret };
}

/** The app trusting the test as its proxy, so that X-Forwarded-For is the client address. */
const trustingApp = (clock: ManualClock, env: Record<string, string> = {}) => createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback', ...env } });

const auditEvents = async (type: string, keyId: string) =>
  (await sql<{ n: string }>`select count(*) as n from security_events where type = ${type} and target_id = ${keyId}`.execute(database.db)).rows[0]!.n;

describe('a key with a rate limit', () => {
  it('lets 5 requests per 10 s through, refuses the 6th with 429 rate_limited and Retry-After, counts down in RateLimit, and resets with the next window', async () => {
    const clock = windowStart();
    const { app } = createTestApp(database.db, { clock });
    const key = await keyWith(clock, { rate_limit: { requests: 5, per_seconds: 10 } });
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
      expect(res.status).toBe(200);
      expect(res.headers['ratelimit-policy']).toBe('"api-key";q=5;w=10');
      remaining.push(res.headers['ratelimit'] as string);
      expectContractResponse(res, 'GET', '/users');
      clock.advance(1000);
    }
    expect(remaining).toEqual(['"api-key";r=4;t=10', '"api-key";r=3;t=9', '"api-key";r=2;t=8', '"api-key";r=1;t=7', '"api-key";r=0;t=6']);

    const refused = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'rate_limited', retry_after: 5 });
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.headers['ratelimit']).toBe('"api-key";r=0;t=5');
    expectContractResponse(refused, 'GET', '/users');

    clock.advance(5000);
    const next = await request(app).get('/users?limit=1').set('x-api-key', key.secret);
    expect(next.status).toBe(200);
    expect(next.headers['ratelimit']).toBe('"api-key";r=4;t=10');
  });

  it('holds a key without a limit of its own to API_KEY_DEFAULT_RATE_LIMIT, and leaves it unlimited (no headers) without one', async () => {
    const clock = windowStart();
    const key = await keyWith(clock, {});
    const { app: defaulted } = createTestApp(database.db, { clock, env: { API_KEY_DEFAULT_RATE_LIMIT: '2/60' } });
    expect((await request(defaulted).get('/users?limit=1').set('x-api-key', key.secret)).headers['ratelimit-policy']).toBe('"api-key";q=2;w=60');
    expect((await request(defaulted).get('/users?limit=1').set('x-api-key', key.secret)).status).toBe(200);
    expect((await request(defaulted).get('/users?limit=1').set('x-api-key', key.secret)).status).toBe(429);

    const { app: unlimited } = createTestApp(database.db, { clock });
    const res = await request(unlimited).get('/users?limit=1').set('x-api-key', key.secret);
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-policy']).toBeUndefined();
    expect(res.headers['ratelimit']).toBeUndefined();
  });

  it('counts the key\'s requests per hour by outcome, written when the process reconciles', async () => {
    const clock = windowStart();
    const { app, services } = trustingApp(clock);
    const key = await keyWith(clock, { rate_limit: { requests: 2, per_seconds: 60 }, allowed_ips: ['192.0.2.0/24'] }, ['users.list']);
    const from = (ip: string, path = '/users?limit=1') => request(app).get(path).set('x-api-key', key.secret).set('x-forwarded-for', ip);
    expect((await from('192.0.2.1')).status).toBe(200);
    expect((await from('192.0.2.1', '/roles')).status).toBe(403);
    expect((await from('198.51.100.1')).status).toBe(403);
    expect((await from('192.0.2.1')).status).toBe(429);
    await services.admission.reconcile();
    const rows = await database.db.selectFrom('api_key_usage').selectAll().where('api_key_id', '=', key.id).execute();
    expect(rows.map(({ allowed, rate_limited, ip_refused, permission_refused }) => ({ allowed, rate_limited, ip_refused, permission_refused }))).toEqual([
      { allowed: '1', rate_limited: '1', ip_refused: '1', permission_refused: '1' },
    ]);
  });
});

describe('GET /api-keys/{id}/usage', () => {
  it('answers every hour of the span, oldest first, with the counts by outcome once reconciled; 400 for a bad span, 404 for an unknown key', async () => {
    const clock = new ManualClock(new Date('2026-12-14T10:20:00.000Z'));
    const { app: keyApp, services } = createTestApp(database.db, { clock });
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = await keyWith(clock, {}, ['users.list']);
    await request(keyApp).get('/users?limit=1').set('x-api-key', key.secret);
    clock.advance(3_600_000);
    await request(keyApp).get('/users?limit=1').set('x-api-key', key.secret);
    await request(keyApp).get('/roles').set('x-api-key', key.secret);
    await services.admission.reconcile();

    const res = await request(app).get(`/api-keys/${key.id}/usage`).query({ from: '2026-12-14T08:30:00Z', until: '2026-12-14T12:00:00Z' }).set('authorization', testBearer(admin.id));
    expect(res.status, res.text).toBe(200);
    expectContractResponse(res, 'GET', '/api-keys/{id}/usage');
    expect(res.body.data).toEqual([
      { hour: '2026-12-14T08:00:00.000Z', allowed: 0, rate_limited: 0, ip_refused: 0, permission_refused: 0 },
      { hour: '2026-12-14T09:00:00.000Z', allowed: 0, rate_limited: 0, ip_refused: 0, permission_refused: 0 },
      { hour: '2026-12-14T10:00:00.000Z', allowed: 1, rate_limited: 0, ip_refused: 0, permission_refused: 0 },
      { hour: '2026-12-14T11:00:00.000Z', allowed: 1, rate_limited: 0, ip_refused: 0, permission_refused: 1 },
    ]);
    const week = await request(app).get(`/api-keys/${key.id}/usage`).set('authorization', testBearer(admin.id));
    expect(week.body.data).toHaveLength(7 * 24);
    expect(week.body.data.at(-1).hour).toBe('2026-12-14T11:00:00.000Z');

    for (const query of [{ from: '2026-12-14T12:00:00Z', until: '2026-12-14T10:00:00Z' }, { from: '2026-01-01T00:00:00Z', until: '2026-12-14T10:00:00Z' }, { from: 'yesterday' }]) {
      const bad = await request(app).get(`/api-keys/${key.id}/usage`).query(query).set('authorization', testBearer(admin.id));
      expect(bad.status, JSON.stringify(query)).toBe(400);
      expectContractResponse(bad, 'GET', '/api-keys/{id}/usage');
    }
    // A text the date-time format lets through but that names no instant (month 19) is named as such, not taken for a bad span.
    for (const [name, query] of [['until', { from: '2026-12-14T08:00:00Z', until: '2026-19-14T10:00:00Z' }], ['from', { from: '2026-12-39T08:00:00Z' }]] as const) {
      const bad = await request(app).get(`/api-keys/${key.id}/usage`).query(query).set('authorization', testBearer(admin.id));
      expect(bad.status, name).toBe(400);
      expect(bad.body.errors, name).toEqual([expect.objectContaining({ location: `request/query/${name}`, error_code: 'invalid_date_time' })]);
    }
    const unknown = await request(app).get('/api-keys/00000000-0000-4000-8000-000000000000/usage').set('authorization', testBearer(admin.id));
    expect(unknown.status).toBe(404);
  });
});

describe('a key with an IP allowlist', () => {
  it('serves its addresses (an IPv4-mapped peer counts as IPv4) and refuses any other with 403 ip_not_allowed naming nothing of the list', async () => {
    const clock = windowStart();
    const { app } = trustingApp(clock);
    const key = await keyWith(clock, { allowed_ips: ['203.0.113.0/24', '2001:db8::/48'] });
    for (const ip of ['203.0.113.9', '::ffff:203.0.113.10', '2001:db8:0:1::5']) {
      const res = await request(app).get('/users?limit=1').set('x-api-key', key.secret).set('x-forwarded-for', ip);
      expect(res.status, ip).toBe(200);
    }
    for (const ip of ['203.0.114.1', '2001:db9::1', '::ffff:198.51.100.7']) {
      const res = await request(app).get('/users?limit=1').set('x-api-key', key.secret).set('x-forwarded-for', ip);
      expect(res.status, ip).toBe(403);
      expect(res.body.code).toBe('ip_not_allowed');
      expect(res.text).not.toMatch(/203\.0\.113|2001:db8/);
      expectContractResponse(res, 'GET', '/users');
    }
  });

  it('a flood from a refused address writes one journal event a minute, with the count of those not written', async () => {
    const clock = windowStart();
    const { app } = trustingApp(clock);
    const key = await keyWith(clock, { allowed_ips: ['203.0.113.7'] });
    const attack = () => request(app).get('/users').set('x-api-key', key.secret).set('x-forwarded-for', '198.51.100.66');
    for (let i = 0; i < 30; i++) expect((await attack()).status).toBe(403);
    // The recording is not awaited by the answer: wait for the pool to settle.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await auditEvents('api_key_ip_refused', key.id)).toBe('1');
    clock.advance(IP_REFUSAL_RECORD_INTERVAL_MS);
    await attack();
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await auditEvents('api_key_ip_refused', key.id)).toBe('2');
    const last = await sql<{ details: { refused_before_unrecorded: number }; ip_address: string }>`
      select details, ip_address from security_events where type = 'api_key_ip_refused' and target_id = ${key.id} order by id desc limit 1`.execute(database.db);
    expect(last.rows[0]).toMatchObject({ details: { refused_before_unrecorded: 29 }, ip_address: '198.51.100.66' });
  });

  it('refuses a malformed entry, a range with host bits, and more than 100 entries with 400, creating nothing', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const create = (allowed_ips: unknown) =>
      request(app).post('/api-keys').set('authorization', testBearer(admin.id)).send({ name: `bad-ips-${Math.random()}`, permissions: ['users.list'], allowed_ips });
    const before = await database.db.selectFrom('api_keys').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
    const hostBits = await create(['192.0.2.5/24']);
    expect(hostBits.status).toBe(400);
    expect(hostBits.body.errors[0]).toMatchObject({ location: 'request/body/allowed_ips/0' });
    expect(hostBits.body.errors[0].message).toContain('192.0.2.0/24');
    expect((await create(['not-an-ip'])).status).toBe(400);
    expect((await create(['1.2.3.4/33'])).status).toBe(400);
    expect((await create(Array.from({ length: 101 }, (_, i) => `10.0.${i}.1`))).status).toBe(400);
    const after = await database.db.selectFrom('api_keys').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});

describe('who may change a key\'s limits (docs/AUTH.md)', () => {
  async function setUp() {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    // A key manager who does not hold users.list, the key's permission.
    const manager = await makeUser(database.db, { roleIds: [(await makeRole(database.db, ['api_keys.manage'])).id] });
    const key = await keyWith(clock, { rate_limit: { requests: 100, per_seconds: 60 }, allowed_ips: ['203.0.113.0/24'] });
    const patch = (body: object, who = manager.id) => request(app).patch(`/api-keys/${key.id}`).set('authorization', testBearer(who)).send(body);
    const row = () => database.db.selectFrom('api_keys').select(['rate_limit_requests', 'rate_limit_per_seconds', 'allowed_ips', 'updated_at']).where('id', '=', key.id).executeTakeFirstOrThrow();
    return { key, patch, row };
  }

  it('a manager who does not hold the key\'s permissions cannot loosen its limit or widen its list: 403 target_outranks_caller, nothing changed', async () => {
    const { patch, row } = await setUp();
    const before = await row();
    for (const body of [
      { rate_limit: { requests: 101, per_seconds: 60 } },
      { rate_limit: { requests: 100, per_seconds: 59 } },
      // Fewer requests and a lower rate, but a window length the key has not been counted in.
      { rate_limit: { requests: 50, per_seconds: 30 } },
      { rate_limit: { requests: 100, per_seconds: 120 } },
      { rate_limit: null },
      { allowed_ips: ['203.0.112.0/23'] },
      { allowed_ips: ['203.0.113.0/24', '198.51.100.1'] },
      { allowed_ips: null },
    ]) {
      const res = await patch(body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['users.list'] });
      expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    }
    expect(await row()).toEqual(before);
  });

  it('the same manager may tighten both (a lower count in the same windows, a narrower list), as it may revoke the key', async () => {
    const { patch, row } = await setUp();
    const tightened = await patch({ rate_limit: { requests: 50, per_seconds: 60 }, allowed_ips: ['203.0.113.128/25', '203.0.113.7'] });
    expect(tightened.status).toBe(200);
    expect(tightened.body).toMatchObject({ rate_limit: { requests: 50, per_seconds: 60 }, allowed_ips: ['203.0.113.128/25', '203.0.113.7'] });
    expectContractResponse(tightened, 'PATCH', '/api-keys/{id}');
    expect(await row()).toMatchObject({ rate_limit_requests: 50, rate_limit_per_seconds: 60 });
  });

  /** A key limited to 10 a minute that has spent them all, at the start of a 60 s (and so of a 30 s) window; and a key manager who does not hold its permission. */
  async function exhaustedKey() {
    const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 60_000));
    const { app } = createAppWithTestBearer(database.db, clock);
    const key = await keyWith(clock, { rate_limit: { requests: 10, per_seconds: 60 } });
    const manager = await makeUser(database.db, { roleIds: [(await makeRole(database.db, ['api_keys.manage'])).id] });
    const use = () => request(app).get('/users?limit=1').set('x-api-key', key.secret);
    const admittedOf = async (n: number) => {
      let admitted = 0;
      for (let i = 0; i < n; i++) if ((await use()).status === 200) admitted++;
      return admitted;
    };
    expect(await admittedOf(12)).toBe(10);
    clock.advance(1_000);
    const patch = (body: object, who = manager.id) => request(app).patch(`/api-keys/${key.id}`).set('authorization', testBearer(who)).send(body);
    return { key, patch, admittedOf };
  }

  it('attack: a manager without the key\'s permissions "tightens" 10/60 s to 5/30 s, and the exhausted key gets 5 more at once (15 in 30 s): a new window length is refused as a loosening', async () => {
    const { key, patch, admittedOf } = await exhaustedKey();
    const res = await patch({ rate_limit: { requests: 5, per_seconds: 30 } });
    // Within [0 s, 30 s) the key made 10 requests already: it gets none.
    expect({ patch: res.status, admittedAfter: await admittedOf(10) }).toEqual({ patch: 403, admittedAfter: 0 });
    expect(res.body).toMatchObject({ code: 'target_outranks_caller', missing_permissions: ['users.list'] });
    expectContractResponse(res, 'PATCH', '/api-keys/{id}');
    expect(await database.db.selectFrom('api_keys').select(['rate_limit_requests', 'rate_limit_per_seconds']).where('id', '=', key.id).executeTakeFirstOrThrow()).toEqual({ rate_limit_requests: 10, rate_limit_per_seconds: 60 });
  });

  it('a lower count in the same windows keeps counting what the key spent: the exhausted key gets none more', async () => {
    const { patch, admittedOf } = await exhaustedKey();
    expect((await patch({ rate_limit: { requests: 5, per_seconds: 60 } })).status).toBe(200);
    expect(await admittedOf(10)).toBe(0);
  });

  it('an administrator (holding every permission of the key) may loosen both, and the journal shows before and after', async () => {
    const { key, patch } = await setUp();
    const res = await patch({ rate_limit: null, allowed_ips: null }, admin.id);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ rate_limit: null, allowed_ips: null });
    const event = await sql<{ changes: unknown }>`select changes from security_events where type = 'api_key_updated' and target_id = ${key.id}`.execute(database.db);
    expect(event.rows[0]!.changes).toEqual({ before: { rate_limit: '100/60s', allowed_ips: ['203.0.113.0/24'] }, after: { rate_limit: null, allowed_ips: null } });
  });
});

describe('a signed-in person on expensive operations', () => {
  it('is held to USER_RATE_LIMIT on operations marked x-user-rate-limit, and not on the others', async () => {
    const clock = windowStart();
    const { deps } = createTestApp(database.db, { clock });
    const { app } = createTestApp(database.db, { clock, env: { USER_RATE_LIMIT: '2/60' }, authenticators: authenticatorsWithTestBearer(deps) });
    const person = await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] });
    const journal = () => request(app).get('/audit-events?limit=1').set('authorization', testBearer(person.id));
    const first = await journal();
    expect(first.status, first.text).toBe(200);
    expect(first.headers['ratelimit-policy']).toBe('"user";q=2;w=60');
    expect((await journal()).status).toBe(200);
    const refused = await journal();
    expect(refused.status).toBe(429);
    expectContractResponse(refused, 'GET', '/audit-events');
    const cheap = await request(app).get('/users?limit=1').set('authorization', testBearer(person.id));
    expect(cheap.status).toBe(200);
    expect(cheap.headers['ratelimit-policy']).toBeUndefined();
  });
});
