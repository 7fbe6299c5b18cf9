// Idempotency-Key on the creates, tried as a flaky network and an attacker would: retries,
// storms, a changed body, another caller's key value, a crash in the middle, a secret shown once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { adminRoleId, createAppWithTestBearer, makeApiKey, makeUser, testBearer } from './support/access-fixtures.js';
import { secondInstance } from './support/second-instance.js';
import { ManualClock } from '../src/clock.js';

let database: TestDatabase;
let adminId: string;
beforeAll(async () => {
  database = await createTestDatabase();
  adminId = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
});
afterAll(() => database.destroy());

const rolesNamed = async (name: string) => (await database.db.selectFrom('roles').select('id').where('name', '=', name).execute()).length;
const auditEvents = async (type: string, label: string) =>
  (await database.db.selectFrom('security_events').select('id').where('type', '=', type).where('target_label', '=', label).execute()).length;

/** Raw bytes of a body, to compare answers byte for byte. */
const raw = (res: request.Response) => res.text;

describe('Idempotency-Key', () => {
  it('a retried POST /roles replays the first answer byte for byte, with one role and one audit event', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `retried-${key.slice(0, 8)}`;
    const send = () => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    const first = await send();
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expectContractResponse(first, 'POST', '/roles');
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(raw(again)).toBe(raw(first));
    expect(again.headers.etag).toBe(first.headers.etag);
    expectContractResponse(again, 'POST', '/roles');
    expect(await rolesNamed(name)).toBe(1);
    expect(await auditEvents('role_created', name)).toBe(1);
  });

  it('the same key with a changed body answers 422 idempotency_key_reused and creates nothing', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const name = `changed-${key.slice(0, 8)}`;
    const post = (body: object) => request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send(body);
    expect((await post({ name, permissions: ['users.list'] })).status).toBe(201);
    const changed = await post({ name: `${name}-2`, permissions: ['users.list'] });
    expect(changed.status).toBe(422);
    expect(changed.body.code).toBe('idempotency_key_reused');
    expectContractResponse(changed, 'POST', '/roles');
    // The same JSON written with other bytes is another request too (the digest is of the body as received).
    const reformatted = await request(app)
      .post('/roles')
      .set('authorization', testBearer(adminId))
      .set('idempotency-key', key)
      .set('content-type', 'application/json')
      .send(`{ "name": "${name}", "permissions": ["users.list"] }`);
    expect(reformatted.status).toBe(422);
    // And so is the same body asking for another key style.
    const camel = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).set('x-api-inflection', 'camel').send({ name, permissions: ['users.list'] });
    expect(camel.status).toBe(422);
    expect(await rolesNamed(`${name}-2`)).toBe(0);
  });

  it("replaying with another caller's key value never answers the first caller's answer", async () => {
    const { app } = createAppWithTestBearer(database.db);
    const attacker = (await makeUser(database.db, { roleIds: [await adminRoleId(database.db)] })).id;
    const key = randomUUID();
    const name = `victim-${key.slice(0, 8)}`;
    const victim = await request(app).post('/roles').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    expect(victim.status).toBe(201);
    // The attacker learned the key value and sends the very same request: it is their own request, run as such.
    const stolen = await request(app).post('/roles').set('authorization', testBearer(attacker)).set('idempotency-key', key).send({ name, permissions: ['users.list'] });
    expect(stolen.status).toBe(409);
    expect(stolen.body.code).toBe('name_taken');
    expect(stolen.headers['idempotent-replayed']).toBeUndefined();
    expect(stolen.text).not.toContain(victim.body.id);
    // With another body, the key value is simply theirs: a creation of their own.
    const theirs = await request(app).post('/roles').set('authorization', testBearer(attacker)).set('idempotency-key', key).send({ name: `${name}-a`, permissions: [] });
    expect(theirs.status).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    // An API key is a caller of its own too.
    const apiKey = await makeApiKey(database.db, ['roles.manage', 'users.list']);
    const byKey = await request(app).post('/roles').set('x-api-key', apiKey.secret).set('idempotency-key', key).send({ name: `${name}-k`, permissions: [] });
    expect(byKey.status).toBe(201);
    expect(byKey.headers['idempotent-replayed']).toBeUndefined();
  });

  it('a retry storm of 50 identical concurrent POST /users makes one user and one audit event', async () => {
    const { app } = createAppWithTestBearer(database.db);
    const key = randomUUID();
    const email = `storm-${key.slice(0, 8)}@example.com`;
    const answers = await Promise.all(
      Array.from({ length: 50 }, () =>
        request(app).post('/users').set('authorization', testBearer(adminId)).set('idempotency-key', key).send({ email, first_name: 'Storm', last_name: 'Trooper' }),
      ),
    );
    const created = answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined);
    expect(created).toHaveLength(1);
    for (const a of answers) {
      if (a.status === 201) expect(raw(a)).toBe(raw(created[0]!));
      else {
        expect(a.status).toBe(409);
        expect(a.body.code).toBe('idempotency_key_in_progress');
        expect(a.headers['retry-after']).toBe('1');
      }
    }
    const users = await database.db.selectFrom('users').select('id').where('email', '=', email).execute();
    expect(users).toHaveLength(1);
    expect(await database.db.selectFrom('security_events').select('id').where('type', '=', 'user_created').where('target_id', '=', users[0]!.id).execute()).toHaveLength(1);
  });

  it('a storm of 50 identical POST /roles across two service instances makes one role', async () => {
    const clock = new ManualClock(new Date());
    const { app } = createAppWithTestBearer(database.db, clock);
    const second = await secondInstance(database.url, { clock });
    try {
      const apiKey = await makeApiKey(database.db, ['roles.manage', 'users.list']);
      const key = randomUUID();
      const name = `two-${key.slice(0, 8)}`;
      const answers = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          request(i % 2 === 0 ? app : second.app).post('/roles').set('x-api-key', apiKey.secret).set('idempotency-key', key).send({ name, permissions: [] }),
        ),
      );
      expect(answers.filter((a) => a.status === 201 && a.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
      expect(answers.every((a) => a.status === 201 || (a.status === 409 && a.body.code === 'idempotency_key_in_progress'))).toBe(true);
      expect(await rolesNamed(name)).toBe(1);
      expect(await auditEvents('role_created', name)).toBe(1);
    } finally {
      await second.close();
    }
  });
});
