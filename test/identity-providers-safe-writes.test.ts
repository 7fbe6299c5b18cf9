// Identity providers built the house's one way (docs/RESOURCES.md, docs/SAFE-WRITES.md), on the real
// service and PostgreSQL, against a hand-made OpenID Provider on loopback: an ETag on what a GET,
// a create and a PATCH answer; If-Match on PATCH and DELETE (stale: 412, nothing written); a
// keyset-paged list with a sealed cursor; an Idempotency-Key that replays a create and stores no
// client secret; one audit event per write. test/resource-round-trip.test.ts checks the round trip
// and ids in capitals.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { budget } from './support/budgets.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { digestTables, tableNames } from './support/table-digest.js';
import { startHandMadeProvider, type HandMadeProvider } from './support/oidc.js';

let database: TestDatabase;
let op: HandMadeProvider;
let service: ReturnType<typeof createTestApp>;
let token: string;

beforeAll(async () => {
  database = await createTestDatabase();
  op = await startHandMadeProvider();
  service = createTestApp(database.db);
  const person = await createUser(database.db, { roles: ['admin'] });
  token = (await signIn(service.app, person.email, person.password)).access_token;
  // Configuring identity providers needs a fresh proof (x-step-up).
  await steppedUpInDatabase(database.db, person.id);
  await request(service.app).post('/roles').set(auth()).send({ name: 'support', permissions: ['users.list', 'users.read'] }).expect(201);
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await op?.close();
  await database?.destroy();
});

const auth = () => ({ authorization: `Bearer ${token}` });
const fields = (name = `idp-${randomUUID().slice(0, 8)}`) => ({
  name,
  issuer: op.issuer,
  client_id: op.clientId,
  client_secret: op.clientSecret,
  domains: [`${name}.example`],
  role_mappings: [{ group: 'support-team', roles: ['support'] }],
});

async function create(body = fields(), headers: Record<string, string> = {}) {
  const res = await request(service.app).post('/identity-providers').set(auth()).set(headers).send(body);
  expectContractResponse(res, 'post', '/identity-providers');
  return res;
}

const eventsOf = (id: string) =>
  database.db.selectFrom('security_events').select(['type']).where('target_id', '=', id).where('type', 'like', 'identity_provider_%').orderBy('id').execute();

describe('identity providers: ETag and If-Match', () => {
  it('GET, create and PATCH answer an ETag; If-None-Match answers 304; the PATCH with the current tag changes it, one audit event', async () => {
    const created = await create();
    expect(created.status, created.text).toBe(201);
    const id = created.body.id as string;
    expect(created.headers.location).toBe(`/identity-providers/${id}`);
    expect(created.headers.etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    const read = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    expectContractResponse(read, 'get', '/identity-providers/{id}');
    expect(read.headers.etag).toBe(created.headers.etag);
    await request(service.app).get(`/identity-providers/${id}`).set(auth()).set('If-None-Match', read.headers.etag as string).expect(304);

    const patched = await request(service.app).patch(`/identity-providers/${id}`).set(auth()).set('If-Match', read.headers.etag as string).send({ sso_required: true });
    expectContractResponse(patched, 'patch', '/identity-providers/{id}');
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.sso_required).toBe(true);
    expect(patched.headers.etag).not.toBe(read.headers.etag);
    const again = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    expect(again.headers.etag).toBe(patched.headers.etag);
    expect(await eventsOf(id)).toEqual([{ type: 'identity_provider_created' }, { type: 'identity_provider_updated' }]);
  });

  it('a stale If-Match (someone changed the provider since it was read) is 412 on PATCH and DELETE, and writes nothing', async () => {
    const id = (await create()).body.id as string;
    const read = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    const stale = read.headers.etag as string;
    // Someone else's change meanwhile.
    await request(service.app).patch(`/identity-providers/${id}`).set(auth()).send({ create_unknown_people: true }).expect(200);

    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const patch = await request(service.app).patch(`/identity-providers/${id}`).set(auth()).set('If-Match', stale).send({ sso_required: true, client_secret: 'another-secret' });
    expectContractResponse(patch, 'patch', '/identity-providers/{id}');
    expect(patch.status, patch.text).toBe(412);
    expect(patch.body.code).toBe('precondition_failed');
    const remove = await request(service.app).delete(`/identity-providers/${id}`).set(auth()).set('If-Match', stale);
    expectContractResponse(remove, 'delete', '/identity-providers/{id}');
    expect(remove.status, remove.text).toBe(412);
    expect(await digestTables(database.db, tables)).toEqual(before);

    // With the current tag, the removal goes through: one event.
    const current = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    await request(service.app).delete(`/identity-providers/${id}`).set(auth()).set('If-Match', current.headers.etag as string).expect(204);
    expect(await eventsOf(id)).toEqual([{ type: 'identity_provider_created' }, { type: 'identity_provider_updated' }, { type: 'identity_provider_deleted' }]);
  });

  it('a role it maps renamed changes its representation, so its tag moves with no write to the provider', async () => {
    const role = `mapped-${randomUUID().slice(0, 8)}`;
    const made = await request(service.app).post('/roles').set(auth()).send({ name: role, permissions: ['users.list'] }).expect(201);
    const id = (await create({ ...fields(), role_mappings: [{ group: 'g', roles: [role] }] })).body.id as string;
    const read = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    await request(service.app).patch(`/roles/${made.body.id as string}`).set(auth()).send({ name: `${role}-renamed` }).expect(200);
    const after = await request(service.app).get(`/identity-providers/${id}`).set(auth()).expect(200);
    expect(after.body.role_mappings).toEqual([{ group: 'g', roles: [`${role}-renamed`] }]);
    expect(after.headers.etag).not.toBe(read.headers.etag);
    await request(service.app).patch(`/identity-providers/${id}`).set(auth()).set('If-Match', read.headers.etag as string).send({ sso_required: true }).expect(412);
  });
});

describe('identity providers: Idempotency-Key', () => {
  it('a retried create replays the first answer (same id, same ETag), creates one provider, and the stored answer holds no client secret', async () => {
    const key = randomUUID();
    const body = { ...fields(), client_secret: op.clientSecret };
    const first = await create(body, { 'Idempotency-Key': key });
    expect(first.status, first.text).toBe(201);
    const replay = await create(body, { 'Idempotency-Key': key });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect(replay.headers.etag).toBe(first.headers.etag);
    expect(replay.headers.location).toBe(first.headers.location);
    expect(await database.db.selectFrom('identity_providers').select('id').where('name', '=', body.name).execute()).toHaveLength(1);
    expect(await eventsOf(first.body.id as string)).toEqual([{ type: 'identity_provider_created' }]);
    const stored = await database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(stored.length).toBeGreaterThan(0);
    expect(JSON.stringify(stored)).not.toContain(op.clientSecret);

    // The same key with another body is refused, and nothing is created.
    const other = await create({ ...body, name: `${body.name}-2`, domains: [`${body.name}-2.example`] }, { 'Idempotency-Key': key });
    expect(other.status, other.text).toBe(422);
  });
});

describe('identity providers: the list is paged', () => {
  it('a page that ends on a long name beyond ASCII still pages: its cursor, longer than the other lists\' 200 characters, is answered and taken back', async () => {
    const made: string[] = [];
    for (let i = 0; i < 2; i++) {
      const tag = randomUUID().slice(0, 4);
      const res = await create({ ...fields(), name: `${'Ünïcödé'.repeat(8)}${tag}`, domains: [`u-${tag}.example`] });
      expect(res.status, res.text).toBe(201);
      made.push(res.body.id as string);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let longest = 0;
    for (let pages = 0; pages < 100; pages++) {
      const res = await request(service.app)
        .get('/identity-providers')
        .query({ limit: 1, ...(cursor ? { cursor } : {}) })
        .set(auth());
      expectContractResponse(res, 'get', '/identity-providers');
      expect(res.status, res.text).toBe(200);
      seen.push(...(res.body.data as { id: string }[]).map((p) => p.id));
      cursor = res.body.next_cursor as string | null;
      longest = Math.max(longest, cursor?.length ?? 0);
      if (!cursor) break;
    }
    expect(longest).toBeGreaterThan(200);
    for (const id of made) expect(seen).toContain(id);
  });

  it('walks every provider once, in name order, across pages of 2 with the sealed cursor; an altered cursor is 400 invalid_cursor', async () => {
    for (let i = 0; i < 5; i++) await create(fields(`page-${i}-${randomUUID().slice(0, 4)}`));
    const all = await database.db.selectFrom('identity_providers').select(['id', 'name_key']).orderBy('name_key').orderBy('id').execute();
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await request(service.app)
        .get('/identity-providers')
        .query({ limit: 2, ...(cursor ? { cursor } : {}) })
        .set(auth());
      expectContractResponse(res, 'get', '/identity-providers');
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...(res.body.data as { id: string }[]).map((p) => p.id));
      cursor = res.body.next_cursor as string | null;
      pages++;
    } while (cursor && pages < 50);
    expect(seen).toEqual(all.map((p) => p.id));
    expect(pages).toBe(Math.ceil(all.length / 2));

    const first = await request(service.app).get('/identity-providers').query({ limit: 1 }).set(auth()).expect(200);
    const altered = (first.body.next_cursor as string).replace(/^./, (c) => (c === 'e' ? 'f' : 'e'));
    const refused = await request(service.app).get('/identity-providers').query({ cursor: altered }).set(auth());
    expectContractResponse(refused, 'get', '/identity-providers');
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_cursor');
  });
});
