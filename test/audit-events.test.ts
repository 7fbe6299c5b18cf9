// GET /audit-events, GET /me/audit-events and the sign-ins per hour, for real: keyset pagination,
// filters, limits, the audit.read permission for keys and people, every inflection, and that
// reading writes nothing (neither here nor on GET /users).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createAppWithTestBearer, makeApiKey, makeRole, makeUser, testBearer } from './support/access-fixtures.js';
import { recordAuditEvent, type AuditEventInput } from '../src/audit/recorder.js';
import type { AuditContext } from '../src/audit/events.js';
import { ManualClock } from '../src/clock.js';
import { ACTOR_TYPES, TARGET_TYPES } from '../src/audit/events.js';

let database: TestDatabase;
let auditKey: string;
let listKey: string;
let auditor: { id: string };
let nobody: { id: string };
beforeAll(async () => {
  database = await createTestDatabase();
  auditKey = (await makeApiKey(database.db, ['audit.read'])).secret;
  listKey = (await makeApiKey(database.db, ['users.list'])).secret;
  auditor = await makeUser(database.db, { roleIds: [(await makeRole(database.db, ['audit.read'])).id] });
  nobody = await makeUser(database.db, { roleIds: [(await makeRole(database.db, ['users.list'])).id] });
});
afterAll(() => database.destroy());

const cli: AuditContext = { actor: { type: 'cli', osUser: 'ops' }, requestId: null, ip: null, userAgent: null };
const record = (event: Partial<AuditEventInput> & Pick<AuditEventInput, 'type' | 'at'>) => recordAuditEvent(database.db, { context: cli, ...event });
const countEvents = async () => Number((await database.db.selectFrom('security_events').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('GET /audit-events', () => {
  it('walks every event exactly once, newest first, even events recorded in the same microsecond', async () => {
    const target = randomUUID();
    const sameInstant = new Date('2025-01-01T00:00:00.000Z');
    for (let i = 0; i < 12; i++) await record({ type: 'role_updated', at: sameInstant, target: { type: 'role', id: target, label: 'walk' } });
    for (let i = 1; i <= 6; i++) await record({ type: 'role_updated', at: new Date(sameInstant.getTime() + i * 1000), target: { type: 'role', id: target, label: 'walk' } });
    const expected = (await database.db.selectFrom('security_events').select('id').where('target_id', '=', target).orderBy('occurred_at', 'desc').orderBy('id', 'desc').execute()).map((r) => Number(r.id));

    const { app } = createTestApp(database.db);
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const url: string = `/audit-events?limit=5&target_id=${target}${cursor ? `&cursor=${cursor}` : ''}`;
      const res = await request(app).get(url).set('x-api-key', auditKey);
      expect(res.status).toBe(200);
      expectContractResponse(res, 'GET', '/audit-events');
      seen.push(...res.body.data.map((e: { id: number }) => e.id));
      cursor = res.body.next_cursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(4);
    expect(seen).toEqual(expected);
    expect(new Set(seen).size).toBe(18);
  });

  it('defaults to 50 per page, accepts 200, refuses 201 and an altered cursor with 400', async () => {
    for (let i = 0; i < 55; i++) await record({ type: 'user_updated', at: new Date('2025-02-01T00:00:00Z') });
    const { app } = createTestApp(database.db);
    const first = await request(app).get('/audit-events').set('x-api-key', auditKey);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expect((await request(app).get('/audit-events?limit=200').set('x-api-key', auditKey)).status).toBe(200);
    for (const bad of ['limit=201', 'limit=0', 'cursor=garbage', `cursor=${Buffer.from('{"t":"x","i":"1"}').toString('base64url')}`, 'type=no_such_type', 'since=yesterday', 'actor_id=42']) {
      const res = await request(app).get(`/audit-events?${bad}`).set('x-api-key', auditKey);
      expect(res.status, bad).toBe(400);
      expectContractResponse(res, 'GET', '/audit-events');
    }
  });

  it('attack: a since or before the date-time format lets through but names no instant (month 19, day 39, hour 29, a leap second, offset +99:99), on either list: 400 naming the field, never a 500', async () => {
    const { app } = createAppWithTestBearer(database.db);
    for (const [name, value] of [['since', '2026-19-01T10:00:00Z'], ['before', '2026-02-39T10:00:00Z'], ['since', '2026-02-10T29:00:00Z'], ['before', '9999-12-31T23:59:60Z'], ['since', '2026-01-01T00:00:00+99:99']] as const) {
      const query = `${name}=${encodeURIComponent(value)}`;
      for (const [res, path] of [
        [await request(app).get(`/audit-events?${query}`).set('x-api-key', auditKey), '/audit-events'],
        [await request(app).get(`/me/audit-events?${query}`).set('authorization', testBearer(nobody.id)), '/me/audit-events'],
      ] as const) {
        expect(res.status, `${path}?${query}`).toBe(400);
        expect(res.body.code).toBe('validation_failed');
        expect(res.body.errors).toEqual([expect.objectContaining({ location: `request/query/${name}`, error_code: 'invalid_date_time' })]);
        expectContractResponse(res, 'GET', path);
      }
    }
  });

  it('an audit cursor cannot be edited, nor reused under other filters or by another person', async () => {
    const target = randomUUID();
    for (let i = 0; i < 3; i++) await record({ type: 'role_updated', at: new Date(`2025-04-0${i + 1}T00:00:00Z`), target: { type: 'role', id: target, label: 'cursor' } });
    const { app } = createAppWithTestBearer(database.db);
    const page = (query: string) => request(app).get(`/audit-events?limit=1&${query}`).set('x-api-key', auditKey);
    const cursor: string = (await page(`target_id=${target}`)).body.next_cursor;
    expect((await page(`target_id=${target}&cursor=${cursor}`)).status).toBe(200);
    const [payload, signature] = cursor.split('.');
    const moved = Buffer.from(JSON.stringify({ t: '2000-01-01T00:00:00.000000Z', i: '1' })).toString('base64url');
    for (const query of [`target_id=${target}&cursor=${moved}.${signature}`, `target_id=${target}&cursor=${payload}`, `target_id=${randomUUID()}&cursor=${cursor}`, `cursor=${cursor}`, `target_id=${target}&type=role_updated&cursor=${cursor}`]) {
      const res = await page(query);
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('invalid_cursor');
    }
    // GET /me/audit-events: one person's cursor is not another's.
    for (let i = 0; i < 3; i++) await record({ type: 'password_changed', at: new Date(`2025-04-1${i}T00:00:00Z`), userId: auditor.id });
    const mine = (await request(app).get('/me/audit-events?limit=1').set('authorization', testBearer(auditor.id))).body.next_cursor as string;
    expect(mine).toEqual(expect.any(String));
    const theirs = await request(app).get(`/me/audit-events?limit=1&cursor=${mine}`).set('authorization', testBearer(nobody.id));
    expect(theirs.status).toBe(400);
    expect(theirs.body.code).toBe('invalid_cursor');
  });

  it('filters by type, actor, target, the person concerned and time, combined', async () => {
    const ada = randomUUID();
    const key = randomUUID();
    const grace = randomUUID();
    const at = (iso: string) => new Date(iso);
    const adaActs: AuditContext = { actor: { type: 'user', userId: ada, sessionId: randomUUID() }, requestId: 'r1', ip: '203.0.113.7', userAgent: 'test' };
    await record({ type: 'api_key_created', at: at('2025-03-01T10:00:00Z'), context: adaActs, target: { type: 'api_key', id: key, label: 'ci-deploy' } });
    await record({ type: 'api_key_rotated', at: at('2025-03-02T10:00:00Z'), context: adaActs, target: { type: 'api_key', id: key, label: 'ci-deploy' }, details: { grace_period_seconds: 3600 } });
    await record({ type: 'user_disabled', at: at('2025-03-03T10:00:00Z'), context: adaActs, target: { type: 'user', id: grace, label: 'Grace' }, userId: grace });
    await record({ type: 'api_key_revoked', at: at('2025-03-04T10:00:00Z'), target: { type: 'api_key', id: key, label: 'ci-deploy' } });

    const { app } = createTestApp(database.db);
    const ids = async (query: string) => {
      const res = await request(app).get(`/audit-events?${query}`).set('x-api-key', auditKey);
      expect(res.status, `${query} ${res.text}`).toBe(200);
      expectContractResponse(res, 'GET', '/audit-events');
      return res.body.data.map((e: { type: string }) => e.type);
    };
    expect(await ids(`actor_id=${ada}`)).toEqual(['user_disabled', 'api_key_rotated', 'api_key_created']);
    expect(await ids(`target_id=${key}`)).toEqual(['api_key_revoked', 'api_key_rotated', 'api_key_created']);
    expect(await ids(`target_id=${key}&actor_type=cli`)).toEqual(['api_key_revoked']);
    expect(await ids(`target_id=${key}&type=api_key_created,api_key_revoked`)).toEqual(['api_key_revoked', 'api_key_created']);
    expect(await ids(`actor_id=${ada}&target_type=user`)).toEqual(['user_disabled']);
    expect(await ids(`user_id=${grace}`)).toEqual(['user_disabled']);
    // Every kind of actor and target recorded can be filtered by (the filters once lagged the kinds).
    for (const kind of TARGET_TYPES) await ids(`target_type=${kind}`);
    for (const kind of ACTOR_TYPES) await ids(`actor_type=${kind}`);
    expect(await ids(`target_id=${key}&since=${encodeURIComponent('2025-03-02T10:00:00Z')}&before=${encodeURIComponent('2025-03-04T10:00:00+00:00')}`)).toEqual(['api_key_rotated']);
  });

  it('shows actor, target, request, details and changes in every inflection, the free-form maps untouched', async () => {
    const key = randomUUID();
    await record({
      type: 'api_key_updated',
      at: new Date('2025-04-01T00:00:00Z'),
      context: { actor: { type: 'api_key', apiKeyId: randomUUID() }, requestId: 'req-77', ip: '198.51.100.4', userAgent: 'curl/8' },
      target: { type: 'api_key', id: key, label: 'reporting' },
      details: { some_fact: 1 },
      changes: { before: { expires_at: null }, after: { expires_at: '2027-01-01T00:00:00.000Z' } },
    });
    const { app } = createTestApp(database.db);
    const snake = await request(app).get(`/audit-events?target_id=${key}`).set('x-api-key', auditKey);
    expect(snake.body.data[0]).toMatchObject({
      type: 'api_key_updated',
      occurred_at: '2025-04-01T00:00:00.000Z',
      actor: { type: 'api_key', label: null, session_id: null },
      target: { type: 'api_key', id: key, label: 'reporting' },
      ip_address: '198.51.100.4',
      user_agent: 'curl/8',
      request_id: 'req-77',
      details: { some_fact: 1 },
      changes: { before: { expires_at: null }, after: { expires_at: '2027-01-01T00:00:00.000Z' } },
    });
    const keys = { camel: ['occurredAt', 'requestId', 'sessionId'], pascal: ['OccurredAt', 'RequestId', 'SessionId'], dash: ['occurred-at', 'request-id', 'session-id'] };
    for (const [style, [occurred, requestId, session]] of Object.entries(keys)) {
      const res = await request(app).get(`/audit-events?target_id=${key}`).set('x-api-key', auditKey).set('x-api-inflection', style);
      expect(res.status).toBe(200);
      const event = (res.body.data ?? res.body.Data)[0];
      expect(event[occurred!]).toBe('2025-04-01T00:00:00.000Z');
      expect(event[requestId!]).toBe('req-77');
      expect(Object.values(event).some((v) => typeof v === 'object' && v !== null && session! in v)).toBe(true);
      expect(JSON.stringify(res.body)).toContain('"some_fact":1');
      expect(JSON.stringify(res.body)).toContain('"expires_at":"2027-01-01T00:00:00.000Z"');
    }
  });

  it('needs audit.read, from an API key or a person; 403 names it', async () => {
    const { app } = createAppWithTestBearer(database.db);
    expect((await request(app).get('/audit-events').set('x-api-key', auditKey)).status).toBe(200);
    expect((await request(app).get('/audit-events').set('authorization', testBearer(auditor.id))).status).toBe(200);
    for (const caller of [{ 'x-api-key': listKey }, { authorization: testBearer(nobody.id) }]) {
      for (const path of ['/audit-events', '/audit-events/sign-ins-per-hour']) {
        const res = await request(app).get(path).set(caller);
        expect(res.status).toBe(403);
        expect(res.body).toMatchObject({ code: 'permission_denied', required_permission: 'audit.read' });
      }
    }
    expect((await request(app).get('/audit-events')).status).toBe(401);
  });

  it('records nothing when read, nor when GET /users is read', async () => {
    const { app } = createTestApp(database.db);
    const before = await countEvents();
    expect((await request(app).get('/audit-events').set('x-api-key', auditKey)).status).toBe(200);
    expect((await request(app).get('/audit-events/sign-ins-per-hour').set('x-api-key', auditKey)).status).toBe(200);
    const users = await request(app).get('/users').set('x-api-key', listKey);
    expect(users.status).toBe(200);
    expect(await countEvents()).toBe(before);
  });
});

describe('the recorder', () => {
  it('refuses details or changes naming a credential, and writes nothing then', async () => {
    const before = await countEvents();
    const at = new Date('2025-06-01T00:00:00Z');
    await expect(record({ type: 'user_updated', at, details: { access_token: 'boa_x' } })).rejects.toThrow('An audit event\'s details may not hold "access_token".');
    await expect(record({ type: 'user_updated', at, changes: { before: null, after: { password_hash: '$argon2id$' } } })).rejects.toThrow('may not hold "password_hash"');
    await expect(record({ type: 'api_key_created', at, changes: { before: null, after: { nested: { secret: 'x' } } } })).rejects.toThrow('may not hold "secret"');
    expect(await countEvents()).toBe(before);
    await record({ type: 'user_created', at, details: { password_set: true } });
    expect(await countEvents()).toBe(before + 1);
  });
});

describe('GET /me/audit-events', () => {
  it("lists what the person did and what was done to their account, nobody else's, without audit.read", async () => {
    const me = await makeUser(database.db);
    const other = await makeUser(database.db);
    const mine: AuditContext = { actor: { type: 'user', userId: me.id, sessionId: randomUUID() }, requestId: null, ip: '192.0.2.1', userAgent: 'test' };
    await record({ type: 'api_key_created', at: new Date('2025-05-01T00:00:00Z'), context: mine, target: { type: 'api_key', id: randomUUID(), label: 'a key' } });
    await record({ type: 'session_revoked', at: new Date('2025-05-02T00:00:00Z'), userId: me.id, target: { type: 'session', id: randomUUID(), label: null } });
    await record({ type: 'sign_in_failed', at: new Date('2025-05-03T00:00:00Z'), context: { ...cli, actor: { type: 'anonymous' } }, userId: me.id, details: { reason: 'wrong_password' } });
    await record({ type: 'user_updated', at: new Date('2025-05-04T00:00:00Z'), userId: other.id });

    const { app } = createAppWithTestBearer(database.db);
    const res = await request(app).get('/me/audit-events').set('authorization', testBearer(me.id));
    expect(res.status).toBe(200);
    expectContractResponse(res, 'GET', '/me/audit-events');
    expect(res.body.data.map((e: { type: string }) => e.type)).toEqual(['sign_in_failed', 'session_revoked', 'api_key_created']);
    const page = await request(app).get('/me/audit-events?limit=2&type=sign_in_failed,api_key_created').set('authorization', testBearer(me.id));
    expect(page.body.data.map((e: { type: string }) => e.type)).toEqual(['sign_in_failed', 'api_key_created']);
    // An API key has no "me".
    expect((await request(app).get('/me/audit-events').set('x-api-key', auditKey)).status).toBe(401);
  });
});

describe('GET /audit-events/sign-ins-per-hour', () => {
  it('counts succeeded, failed and throttled sign-ins in each of the last 168 hours', async () => {
    const clock = new ManualClock(new Date('2030-06-10T12:34:00.000Z'));
    const at = (iso: string) => new Date(iso);
    const anonymous: AuditContext = { ...cli, actor: { type: 'anonymous' } };
    await record({ type: 'sign_in_succeeded', at: at('2030-06-10T12:00:00.000Z') });
    await record({ type: 'sign_in_succeeded', at: at('2030-06-10T12:33:59.000Z') });
    await record({ type: 'sign_in_failed', at: at('2030-06-10T11:59:59.999Z'), context: anonymous });
    await record({ type: 'sign_in_throttled', at: at('2030-06-03T13:10:00.000Z'), context: anonymous }); // the first hour of the window
    await record({ type: 'sign_in_failed', at: at('2030-06-03T12:59:59.000Z'), context: anonymous }); // just before it
    await record({ type: 'tokens_refreshed', at: at('2030-06-10T12:10:00.000Z') });
    const { app } = createTestApp(database.db, { clock });
    const res = await request(app).get('/audit-events/sign-ins-per-hour').set('x-api-key', auditKey);
    expect(res.status).toBe(200);
    expectContractResponse(res, 'GET', '/audit-events/sign-ins-per-hour');
    const hours = res.body.hours as { hour: string; succeeded: number; failed: number; throttled: number }[];
    expect(hours).toHaveLength(168);
    expect(hours[0]).toEqual({ hour: '2030-06-03T13:00:00.000Z', succeeded: 0, failed: 0, throttled: 1 });
    expect(hours[166]).toEqual({ hour: '2030-06-10T11:00:00.000Z', succeeded: 0, failed: 1, throttled: 0 });
    expect(hours[167]).toEqual({ hour: '2030-06-10T12:00:00.000Z', succeeded: 2, failed: 0, throttled: 0 });
    expect(hours.reduce((n, h) => n + h.succeeded + h.failed + h.throttled, 0)).toBe(4);
  });
});
