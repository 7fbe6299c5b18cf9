// The signing secrets of webhook endpoints are sealed under the configured sealing keys, never
// under a key the database keeps (as TOTP keys are: test/sealing-keys.test.ts), tried as the holder of
// a stolen backup would: every value of every table tried as the key. And the secrets made before
// (under the database's `webhook_sealing`) or under an older key keep signing once re-sealed.
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql, type Kysely } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { authenticatorsWithTestBearer, testBearer } from './support/access-fixtures.js';
import { createUser } from './support/sessions.js';
import { startReceiver, type Received } from './support/webhook-receiver.js';
import { systemClock } from '../src/clock.js';
import type { Database } from '../src/db/schema.js';
import { keyring, newSealingKeyLine } from '../src/auth/secrets/sealing-keys.js';
import { parseSealingKeys } from '../src/config.js';
import { resealAll } from '../src/maintenance/reseal.js';
import { budget } from './support/budgets.js';
import { newSigningSecret, sealSecret, unsealSecret } from '../src/webhooks/secrets.js';
import { deliverDue } from './support/deliveries.js';

const PRIVATE_OK = { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' };
const keyA = parseSealingKeys(newSealingKeyLine('a'), 'test');
const keyB = parseSealingKeys(newSealingKeyLine('b'), 'test');
const line = (k: typeof keyA) => `${k[0]!.id}:${k[0]!.key.toString('base64')}`;
const withKeys = (...keys: (typeof keyA)[]) => ({ ...PRIVATE_OK, SEALING_KEYS: keys.map(line).join(',') });

function appOn(db: Kysely<Database>, env: Record<string, string> = PRIVATE_OK) {
  const { deps } = createTestApp(db, { clock: systemClock, env });
  return createTestApp(db, { clock: systemClock, env, authenticators: authenticatorsWithTestBearer(deps) });
}

async function partnerOn(db: Kysely<Database>) {
  const user = await createUser(db, { permissions: ['tasks.read', 'tasks.create', 'webhooks.manage'] });
  return { id: user.id, auth: { authorization: testBearer(user.id) } };
}

const verify = (secret: string, got: Received) =>
  new Webhook(secret).verify(got.body, {
    'webhook-id': got.headers['webhook-id'] as string,
    'webhook-timestamp': got.headers['webhook-timestamp'] as string,
    'webhook-signature': got.headers['webhook-signature'] as string,
  });

/** A task created through `app` (on `db`), and what its delivery to every endpoint brought (the worker run until it is fanned out). */
async function deliverATask(built: ReturnType<typeof appOn>, auth: Record<string, string>, db: Kysely<Database>) {
  await request(built.app).post('/tasks').set(auth).send({ title: 'Heard by the partner' }).expect(201);
  await deliverDue(built.services.deliveries, db);
}

describe('a stolen backup', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.destroy());

  /** Every value of every table of the database, as a backup holds them. */
  async function dump(): Promise<unknown[]> {
    const { rows: tables } = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(database.db);
    const values: unknown[] = [];
    for (const { table_name } of tables) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table_name)}`.execute(database.db);
      for (const row of rows) values.push(...Object.values(row));
    }
    return values;
  }

  it("holds no value that opens an endpoint's signing secret: a database dump alone forges no event", { timeout: budget({ passwordHash: 1 }) }, async () => {
    const { app } = appOn(database.db);
    const partner = await partnerOn(database.db);
    const made = await request(app).post('/webhook-endpoints').set(partner.auth).send({ url: 'http://127.0.0.1:9/hooks', event_types: ['task.created'] });
    expect(made.status, made.text).toBe(201);
    const { id } = made.body.webhook_endpoint as { id: string };
    const secret = made.body.secret as string;
    const rotated = await request(app).post(`/webhook-endpoints/${id}/rotate`).set(partner.auth).send({});
    expect(rotated.status, rotated.text).toBe(200);
    const row = await database.db.selectFrom('webhook_endpoints').select(['secret_sealed', 'previous_secret_sealed']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.previous_secret_sealed).not.toBeNull(); // the first secret, still signing during the grace period

    const values = await dump();
    // Every 32-byte value the dump holds, raw or written in hex or base64, tried as the key.
    const candidates: Buffer[] = [];
    for (const value of values) {
      if (Buffer.isBuffer(value) && value.length === 32) candidates.push(value);
      if (typeof value === 'string') for (const decoded of [Buffer.from(value, 'hex'), Buffer.from(value, 'base64')]) if (decoded.length === 32) candidates.push(decoded);
    }
    expect(candidates.length).toBeGreaterThan(0);
    const opens = (key: Buffer, sealed: Buffer) => {
      try {
        unsealSecret(key, id, sealed);
        return true;
      } catch {
        return false;
      }
    };
    expect(candidates.filter((key) => opens(key, row.secret_sealed) || opens(key, row.previous_secret_sealed!))).toEqual([]);
    // Neither secret is there in clear, and no service secret seals them any more.
    const text = values.map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : JSON.stringify(v))).join('\n');
    expect(text).not.toContain(secret);
    expect(text).not.toContain(rotated.body.secret as string);
    expect(await database.db.selectFrom('service_secrets').select('name').where('name', '=', 'webhook_sealing' as never).execute()).toEqual([]);
  });
});

describe('moving to a new key', () => {
  // Each on a database of its own: reseal moves every row, and reports on every row.
  let own: TestDatabase;
  beforeEach(async () => {
    own = await createTestDatabase();
  });
  afterEach(() => own.destroy());

  it('secrets sealed under the database-kept secret (before this change) are sealed again at start, still sign, and that secret is deleted', { timeout: budget({ passwordHash: 1 }) }, async () => {
    const partner = await partnerOn(own.db);
    const receiver = await startReceiver();
    try {
      const legacy = randomBytes(32);
      await own.db.insertInto('service_secrets').values({ name: 'webhook_sealing', secret: legacy, created_at: new Date() }).execute();
      const id = randomUUID();
      const [secret, previous] = [newSigningSecret(), newSigningSecret()];
      await own.db
        .insertInto('webhook_endpoints')
        .values({
          id, url: receiver.url, event_types: ['task.created'], created_by_user_id: partner.id, created_at: new Date(), updated_at: new Date(),
          secret_sealed: sealSecret(legacy, id, secret), secret_key_id: null,
          previous_secret_sealed: sealSecret(legacy, id, previous), previous_secret_key_id: null, previous_secret_until: new Date(Date.now() + 3_600_000),
        })
        .execute();

      const report = await resealAll(own.db, keyring(testConfig().sealingKeys!));
      expect(report).toMatchObject({ webhookSecretsResealed: 2, webhookSecretsUnopenable: 0, webhookDatabaseSecretDeleted: true });
      expect(await own.db.selectFrom('service_secrets').select('name').where('name', '=', 'webhook_sealing').execute()).toEqual([]);
      const current = testConfig().sealingKeys![0]!.id;
      expect(await own.db.selectFrom('webhook_endpoints').select(['secret_key_id', 'previous_secret_key_id']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({
        secret_key_id: current,
        previous_secret_key_id: current,
      });

      // Both secrets still sign: a receiver holding either verifies the delivery.
      await deliverATask(appOn(own.db), partner.auth, own.db);
      expect(receiver.received).toHaveLength(1);
      verify(secret, receiver.received[0]!);
      verify(previous, receiver.received[0]!);
    } finally {
      await receiver.close();
    }
  });

  it('a new key first: secrets under the old one still sign, reseal moves them, then the old key may go; a key removed too early signs nothing', { timeout: budget({ passwordHash: 1 }) }, async () => {
    const partner = await partnerOn(own.db);
    const receiver = await startReceiver();
    try {
      const underA = appOn(own.db, withKeys(keyA));
      const made = await request(underA.app).post('/webhook-endpoints').set(partner.auth).send({ url: receiver.url, event_types: ['task.created'] });
      expect(made.status, made.text).toBe(201);
      const { id } = made.body.webhook_endpoint as { id: string };
      const secret = made.body.secret as string;
      const keyIdOf = async () => (await own.db.selectFrom('webhook_endpoints').select('secret_key_id').where('id', '=', id).executeTakeFirstOrThrow()).secret_key_id;
      expect(await keyIdOf()).toBe('a');

      // B first, A kept after it: what A sealed still opens and signs.
      await deliverATask(appOn(own.db, withKeys(keyB, keyA)), partner.auth, own.db);
      expect(receiver.received).toHaveLength(1);
      verify(secret, receiver.received[0]!);

      // Removed before reseal: nothing can sign, nothing is sent, the delivery says why and will retry.
      const onlyBTooEarly = appOn(own.db, withKeys(keyB));
      await deliverATask(onlyBTooEarly, partner.auth, own.db);
      expect(receiver.received).toHaveLength(1);
      const stuck = await own.db.selectFrom('webhook_deliveries').select(['id', 'status', 'last_error']).where('endpoint_id', '=', id).where('last_error', 'is not', null).execute();
      expect(stuck).toMatchObject([{ status: 'pending', last_error: 'sealing_key_missing' }]);
      expect(onlyBTooEarly.logs.text()).not.toContain(secret);

      const report = await resealAll(own.db, keyring([...keyB, ...keyA]));
      expect(report).toMatchObject({ webhookSecretsResealed: 1, webhookSecretsUnopenable: 0 });
      expect(await keyIdOf()).toBe('b');
      // Now B alone signs with the same secret: the partner changes nothing.
      await own.db.updateTable('webhook_deliveries').set({ next_attempt_at: new Date() }).where('id', '=', stuck[0]!.id).execute();
      await deliverATask(appOn(own.db, withKeys(keyB)), partner.auth, own.db);
      await receiver.until(3);
      expect(receiver.received).toHaveLength(3);
      receiver.received.forEach((got) => verify(secret, got));
    } finally {
      await receiver.close();
    }
  });
});
