// The sealing key lives apart from what it seals and keys the stored digests (recovery codes,
// Idempotency-Key fingerprints), tried as the holder of a stolen backup would: every table read,
// every value tried.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import request from 'supertest';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, passwordStep, secondStep, steppedUpInDatabase, totpCode } from './support/second-factor.js';
import { ManualClock } from '../src/clock.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { keyring, newSealingKeyLine } from '../src/auth/secrets/sealing-keys.js';
import { sealTotpKey, unsealTotpKey } from '../src/auth/second-factors/totp.js';
import { unkeyedRecoveryDigest } from '../src/auth/second-factors/recovery-codes.js';
import { resealAll } from '../src/maintenance/reseal.js';
import { parseSealingKeys } from '../src/config.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-16T10:00:00.000Z');
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

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

/** Every 32-byte value a dump holds, raw or written in hex or base64. */
function candidateKeys(values: unknown[]): Buffer[] {
  const keys: Buffer[] = [];
  for (const value of values) {
    if (Buffer.isBuffer(value) && value.length === 32) keys.push(value);
    if (typeof value === 'string') {
      for (const decoded of [Buffer.from(value, 'hex'), Buffer.from(value, 'base64')]) if (decoded.length === 32) keys.push(decoded);
    }
  }
  return keys;
}

const opens = (key: Buffer, userId: string, sealed: Buffer) => {
  try {
    unsealTotpKey(key, userId, sealed);
    return true;
  } catch {
    return false;
  }
};

describe('a stolen backup', () => {
  it('holds no value that opens a TOTP key: the sealing key is not in the database', { timeout: budget({ passwordHash: 4 }) }, async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db);
    const set = await signIn(app, person.email, person.password);
    await enrolTotp(app, set.access_token, clock, person.password);
    const { totp_secret_sealed: sealed } = await database.db.selectFrom('second_factors').select('totp_secret_sealed').where('user_id', '=', person.id).executeTakeFirstOrThrow();
    const values = await dump();
    const candidates = candidateKeys(values);
    expect(candidates.length).toBeGreaterThan(0); // digests of tokens, keys... every one is tried
    expect(candidates.filter((key) => opens(key, person.id, sealed!))).toEqual([]);
    // The configured key itself is nowhere in it, in any spelling.
    const configured = testConfig().sealingKeys![0]!.key;
    const text = values.map((v) => (Buffer.isBuffer(v) ? v.toString('hex') : JSON.stringify(v))).join('\n');
    expect(text).not.toContain(configured.toString('hex'));
    expect(text).not.toContain(configured.toString('base64'));
  });

  it('holds no recovery-code digest a guess can be checked against without the key', { timeout: budget({ passwordHash: 4 }) }, async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db);
    const set = await signIn(app, person.email, person.password);
    const { recoveryCodes } = await enrolTotp(app, set.access_token, clock, person.password);
    const stored = await database.db.selectFrom('recovery_codes').select(['digest', 'key_id']).where('user_id', '=', person.id).execute();
    expect(stored).toHaveLength(10);
    // Before: SHA-256("recovery:" + code), so a thief could test guesses offline.
    const bare = recoveryCodes.map(unkeyedRecoveryDigest);
    expect(stored.filter((row) => bare.some((digest) => digest.equals(row.digest)))).toEqual([]);
    expect(new Set(stored.map((row) => row.key_id))).toEqual(new Set([testConfig().sealingKeys![0]!.id]));
  });

  it('holds no Idempotency-Key fingerprint that tells whether a guessed password was the one sent', { timeout: budget({ passwordHash: 4 }) }, async () => {
    const admin = await createUser(database.db, { permissions: ['users.create'] });
    const { app } = createTestApp(database.db);
    const set = await signIn(app, admin.email, admin.password);
    await steppedUpInDatabase(database.db, admin.id); // creating a user is a sensitive change (x-step-up)
    const password = 'the initial password of a new person';
    const body = JSON.stringify({ email: `new-${randomBytes(4).toString('hex')}@example.com`, first_name: 'New', last_name: 'Person', password });
    const res = await request(app).post('/users').set(auth(set.access_token)).set('idempotency-key', 'create-new-person').set('content-type', 'application/json').send(body);
    expect(res.status).toBe(201);
    const rows = await database.db.selectFrom('idempotency_keys').select(['fingerprint', 'fingerprint_key_id', 'body']).execute();
    expect(rows).toHaveLength(1);
    // The thief knows everything of the request but the password (the stored answer tells the rest)
    // and tries guesses, the right one among them, at the speed of SHA-256, as the code before
    // stored it: SHA-256 of method, path, key style and the body's bytes.
    const guesses = ['password123', 'Welcome2026!', password, 'another guess'];
    const fingerprintOf = (guess: string) =>
      createHash('sha256').update('POST\n/users\nsnake\n').update(createHash('sha256').update(body.replace(password, guess)).digest()).digest();
    expect(guesses.filter((guess) => fingerprintOf(guess).equals(rows[0]!.fingerprint))).toEqual([]);
    expect(rows[0]!.fingerprint_key_id).toBe(testConfig().sealingKeys![0]!.id);
    // And the same request is still recognised as the same: the retry replays.
    const retry = await request(app).post('/users').set(auth(set.access_token)).set('idempotency-key', 'create-new-person').set('content-type', 'application/json').send(body);
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    const other = await request(app).post('/users').set(auth(set.access_token)).set('idempotency-key', 'create-new-person').set('content-type', 'application/json').send(body.replace(password, 'a different initial password'));
    expect(other.status).toBe(422);
  });
});

describe('moving to a new key', () => {
  // Each on a database of its own: reseal moves every row, and reports on every row.
  let own: TestDatabase;
  beforeEach(async () => {
    own = await createTestDatabase();
  });
  afterEach(() => own.destroy());
  const keyA = parseSealingKeys(newSealingKeyLine('a'), 'test');
  const keyB = parseSealingKeys(newSealingKeyLine('b'), 'test');
  const env = (...keys: string[]) => ({ SEALING_KEYS: keys.join(',') });
  const line = (k: typeof keyA) => `${k[0]!.id}:${k[0]!.key.toString('base64')}`;

  it('a new key first: old values still open, reseal moves them, then the old key may go', { timeout: budget({ passwordHash: 4 }) }, async () => {
    const clock = new ManualClock(START);
    const underA = createTestApp(own.db, { clock, env: env(line(keyA)) });
    const person = await createUser(own.db);
    const set = await signIn(underA.app, person.email, person.password);
    const { secret, recoveryCodes } = await enrolTotp(underA.app, set.access_token, clock, person.password);

    clock.advance(30_000);
    const both = createTestApp(own.db, { clock, env: env(line(keyB), line(keyA)) });
    const first = await secondStep(both.app, { challenge_token: await passwordStep(both.app, person.email, person.password), totp_code: totpCode(secret, clock.now()) });
    expect(first.status).toBe(201);
    const report = await resealAll(own.db, keyring([...keyB, ...keyA]));
    expect(report).toMatchObject({ totpUnopenable: 0, recoveryCodesUnderOlderKeys: { a: 10 } });
    expect(report.totpResealed).toBeGreaterThanOrEqual(1);
    expect((await own.db.selectFrom('second_factors').select('totp_key_id').where('user_id', '=', person.id).executeTakeFirstOrThrow()).totp_key_id).toBe('b');

    clock.advance(30_000);
    const onlyB = createTestApp(own.db, { clock, env: env(line(keyB)) });
    const second = await secondStep(onlyB.app, { challenge_token: await passwordStep(onlyB.app, person.email, person.password), totp_code: totpCode(secret, clock.now()) });
    expect(second.status).toBe(201);
    // A recovery code keyed under a key still configured works; reseal said which key they need.
    const recovered = await secondStep(both.app, { challenge_token: await passwordStep(both.app, person.email, person.password), recovery_code: recoveryCodes[0]! });
    expect(recovered.status).toBe(201);
  });

  it('values of the database-kept secret (before this change) are sealed again at start, and the secret is deleted', { timeout: budget({ passwordHash: 4 }) }, async () => {
    const legacy = randomBytes(32);
    await own.db.insertInto('service_secrets').values({ name: 'second_factor_sealing', secret: legacy, created_at: START }).execute();
    const person = await createUser(own.db);
    const totpKey = randomBytes(20);
    await own.db
      .insertInto('second_factors')
      .values({ user_id: person.id, kind: 'totp', created_at: START, confirmed_at: START, totp_secret_sealed: sealTotpKey(legacy, person.id, totpKey), totp_key_id: null })
      .execute();
    const code = 'abcde-fghjk';
    await own.db.insertInto('recovery_codes').values({ user_id: person.id, digest: unkeyedRecoveryDigest(code), key_id: null, created_at: START }).execute();

    const report = await resealAll(own.db, keyring(testConfig().sealingKeys!));
    expect(report).toMatchObject({ totpUnopenable: 0, databaseSecretDeleted: true });
    expect(report.recoveryCodesKeyed).toBeGreaterThanOrEqual(1);
    expect(await own.db.selectFrom('service_secrets').select('name').where('name', '=', 'second_factor_sealing').execute()).toEqual([]);

    const clock = new ManualClock(START);
    clock.advance(60_000);
    const { app } = createTestApp(own.db, { clock });
    const { Secret, TOTP } = await import('otpauth');
    const totp = TOTP.generate({ secret: new Secret({ buffer: new Uint8Array(totpKey).buffer }), algorithm: 'SHA1', digits: 6, period: 30, timestamp: clock.now().getTime() });
    expect((await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totp })).status).toBe(201);
    expect((await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: code })).status).toBe(201);
  });
});

describe('configuration', () => {
  it('refuses PostgreSQL without a sealing key, and a malformed key', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://localhost/x' })).toThrow(/SEALING_KEYS_FILE \(or SEALING_KEYS\) is required with DATABASE_URL/);
    expect(() => loadConfig({ SEALING_KEYS: 'a:short' })).toThrow(ConfigError);
    expect(() => loadConfig({ SEALING_KEYS: `${newSealingKeyLine('a')},${newSealingKeyLine('a')}` })).toThrow(/twice/);
    expect(loadConfig({ SEALING_KEYS: `# rotated 2026-12\n${newSealingKeyLine('new')}\n${newSealingKeyLine('old')}\n` }).sealingKeys!.map((k) => k.id)).toEqual(['new', 'old']);
  });
});
