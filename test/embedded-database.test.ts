// Smoke test of the embedded default: with no DATABASE_URL the service runs on PGlite, migrates,
// persists under DATA_DIR, and serves requests through the same code path as PostgreSQL.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { buildService } from '../src/main.js';
import { loadConfig } from '../src/config.js';
import { captureLogs } from './support/context.js';
import { createUser } from './support/sessions.js';
import { sweep } from '../src/maintenance/sweeper.js';
import { sealAuditEvents } from '../src/audit/seal.js';
import { verifyAuditTrail } from '../src/audit/verify.js';
import { fanOutEvents } from '../src/webhooks/repository.js';
import { userRow } from './support/rows.js';
import { budget } from './support/budgets.js';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { FIRST_ADMINISTRATOR_FILE } from '../src/users/bootstrap.js';
import { passwordStep, secondStep, totpCode } from './support/second-factor.js';
import { ApiKeyService, type KeyInput } from '../src/api-keys/service.js';
import { OPERATOR } from '../src/auth/authority.js';
import { fileClock } from '../src/clock.js';

const dataDir = mkdtempSync(join(tmpdir(), 'backoffice-pglite-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('embedded PGlite database', () => {
  // Two starts of the embedded database (WebAssembly PostgreSQL, migrated in this process).
  it('migrates, serves, and keeps its data across restarts', { timeout: budget({ pgliteStart: 2 }) }, async () => {
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dataDir });
    expect(config.databaseUrl).toBeUndefined();
    const first = await buildService(config, captureLogs().logger);
    expect(first.database.kind).toBe('embedded');
    expect((await request(first.app).get('/readyz')).status).toBe(200);
    const res = await request(first.app).get('/users');
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    await first.database.db.insertInto('users').values(userRow({ email: 'persisted@example.com', first_name: 'P', last_name: 'Q' })).execute();
    // Signing in runs the throttle's PL/pgSQL function and its advisory locks: PGlite has them too.
    const user = await createUser(first.database.db);
    const wrong = await request(first.app).post('/sessions').send({ session: { email: user.email, password: 'not the password at all' } });
    expect(wrong.status).toBe(401);
    const signedIn = await request(first.app).post('/sessions').send({ session: { email: user.email, password: user.password } });
    expect(signedIn.status).toBe(201);
    expect((await request(first.app).get('/me').set('authorization', `Bearer ${signedIn.body.access_token}`)).status).toBe(200);
    expect(await first.database.db.selectFrom('sign_in_failures').select('id').execute()).toEqual([]); // cleared by the success
    // The sweep's statements (FOR UPDATE SKIP LOCKED in batches) run on PGlite too.
    await first.database.db.insertInto('sign_in_failures').values({ email_digest: Buffer.alloc(32), ip_address: '192.0.2.1', failed_at: new Date(Date.now() - 3600_000) }).execute();
    expect(await sweep(first.database.db, new Date(), config.sweep.policy)).toEqual({ signInAttempts: 1, signInChallenges: 0, sessions: 0, idempotencyAnswers: 0, oidcFlows: 0 });
    // Sealing the audit events (two users created, two sign-ins) and verifying the chain run on PGlite too.
    expect(await sealAuditEvents(first.database.db, new Date())).toEqual({ events: 4, seals: 1 });
    expect(await verifyAuditTrail(first.database.db, { now: new Date(), retentionS: config.sweep.auditRetentionS })).toMatchObject({ ok: true, eventsChecked: 4 });
    // The relay of events to webhook deliveries (FOR UPDATE SKIP LOCKED, the snapshot's xmin) runs on PGlite too.
    const { seq } = await first.database.db
      .insertInto('events')
      .values({ type: 'task.created', occurred_at: new Date(), audit_event_id: null, required_permission: 'tasks.read', payload: JSON.stringify({ type: 'task.created' }) })
      .returning('seq')
      .executeTakeFirstOrThrow();
    await expect
      .poll(async () => {
        await fanOutEvents(first.database.db, 10);
        return (await first.database.db.selectFrom('event_relay').select('last_seq').executeTakeFirstOrThrow()).last_seq;
      })
      .toBe(seq);
    await first.stopBackgroundWork();
    await first.database.close();
    expect(existsSync(join(dataDir, 'pglite'))).toBe(true);

    const second = await buildService(config, captureLogs().logger);
    const rows = await second.database.db.selectFrom('users').select('email').where('email', '=', 'persisted@example.com').execute();
    expect(rows).toHaveLength(1);
    await second.stopBackgroundWork();
    await second.database.close();
  });
});

describe('make run: the first administrator on the embedded database', () => {
  // As a new user tries it: `make run`'s configuration (no DATABASE_URL: PGlite, one connection,
  // a 3 s wait for it, ADMIN_SECOND_FACTOR=required), the first administrator from its file.
  it('chooses a password, enrols an authenticator app, signs out, and signs in again with password and code', { timeout: budget({ pgliteStart: 1, passwordHash: 8 }) }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'backoffice-pglite-2fa-'));
    const clockFile = join(dir, 'clock');
    let now = new Date('2026-12-16T10:00:00.000Z');
    const setClock = (at: Date) => writeFileSync(clockFile, (now = at).toISOString());
    setClock(now);
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, TEST_CLOCK_FILE: clockFile });
    expect(config.secondFactor.requiredForAdmins).toBe(true);
    const service = await buildService(config, captureLogs().logger);
    try {
      expect(service.database.kind).toBe('embedded');
      // Its sealing key, made at first start beside the data, readable by its owner only.
      expect(statSync(join(dir, 'sealing-keys')).mode & 0o777).toBe(0o600);
      expect(await service.database.db.selectFrom('service_secrets').select('name').where('name', '=', 'second_factor_sealing').execute()).toEqual([]);
      const app = service.app;
      const file = readFileSync(join(dir, FIRST_ADMINISTRATOR_FILE), 'utf8');
      const email = /e-mail: +(\S+)/.exec(file)![1]!;
      const firstPassword = /password: +(\S+)/.exec(file)![1]!;
      const password = 'the password I chose for myself';
      const auth = (token: string) => ({ authorization: `Bearer ${token}` });

      const first = await request(app).post('/sessions').send({ session: { email, password: firstPassword } });
      expect(first.status).toBe(201);
      const token = first.body.access_token as string;
      await request(app).put('/me/password').set(auth(token)).send({ current_password: firstPassword, new_password: password }).expect(204);
      expect((await request(app).get('/users').set(auth(token))).body.code).toBe('second_factor_required');
      const started = await request(app).post('/me/totp').set(auth(token));
      expect(started.status).toBe(201);
      const secret = started.body.secret as string;
      const confirmed = await request(app).post('/me/totp/confirm').set(auth(token)).send({ totp_code: totpCode(secret, now) });
      expect(confirmed.status).toBe(200);
      expect((await request(app).get('/users').set(auth(token))).status).toBe(200);
      await request(app).delete('/sessions/current').set(auth(token)).expect(204);

      setClock(new Date(now.getTime() + 30_000)); // the enrolment's code is used up
      // A wrong code is refused as wrong (401), not as an unreachable database (503).
      const wrongChallenge = await passwordStep(app, email, password);
      const wrong = await secondStep(app, { challenge_token: wrongChallenge, totp_code: totpCode(secret, new Date(now.getTime() + 600_000)) });
      expect(wrong.status, wrong.text).toBe(401);
      expect(wrong.body.code).toBe('invalid_second_factor');
      const challenge_token = await passwordStep(app, email, password);
      const signedIn = await secondStep(app, { challenge_token, totp_code: totpCode(secret, now) });
      expect(signedIn.status, signedIn.text).toBe(201);
      expect((await request(app).get('/users').set(auth(signedIn.body.access_token))).status).toBe(200);
    } finally {
      await service.stopBackgroundWork();
      await service.database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('usage-limited keys on the embedded database', () => {
  // The embedded database serves one connection and has no key cache: every key is verified by it,
  // and a use is spent by the same statement as on PostgreSQL.
  it('a key of 3 uses raced by 8 requests admits exactly 3; the refill at midnight UTC exactly its amount; a revoked key refused at the next request', { timeout: budget({ pgliteStart: 1 }) }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'backoffice-pglite-uses-'));
    const clockFile = join(dir, 'clock');
    writeFileSync(clockFile, '2027-03-10T12:00:00.000Z');
    const config = loadConfig({ NODE_ENV: 'test', DATA_DIR: dir, TEST_CLOCK_FILE: clockFile, SWEEP_INTERVAL_S: '0', METRICS_PORT: '0' });
    const service = await buildService(config, captureLogs().logger);
    try {
      const keys = new ApiKeyService({ db: service.database.db, clock: fileClock(clockFile) });
      const makeKey = (sent: KeyInput) => {
        const draft = keys.draft(OPERATOR, sent);
        return service.database.db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
      };
      const race = async (secret: string, n: number) =>
        (await Promise.all(Array.from({ length: n }, () => request(service.app).get('/users?limit=1').set('x-api-key', secret)))).map((r) => r.status);
      const limited = await makeKey({ name: 'limited', permissions: ['users.list'], remaining_uses: 3 });
      const statuses = await race(limited.secret, 8);
      expect(statuses.filter((s) => s === 200)).toHaveLength(3);
      expect(statuses.filter((s) => s === 429)).toHaveLength(5);

      writeFileSync(clockFile, '2027-03-10T23:59:59.900Z');
      const refilled = await makeKey({ name: 'refilled', permissions: ['users.list'], remaining_uses: 0, uses_refill: { interval: 'daily', amount: 2 } });
      expect((await race(refilled.secret, 3)).filter((s) => s === 200)).toHaveLength(0);
      writeFileSync(clockFile, '2027-03-11T00:00:00.000Z');
      expect((await race(refilled.secret, 5)).filter((s) => s === 200)).toHaveLength(2);

      const plain = await makeKey({ name: 'plain', permissions: ['users.list'] });
      expect((await request(service.app).get('/users?limit=1').set('x-api-key', plain.secret)).status).toBe(200);
      await keys.revoke(OPERATOR, plain.key.id);
      expect((await request(service.app).get('/users?limit=1').set('x-api-key', plain.secret)).status).toBe(401);
    } finally {
      await service.stopBackgroundWork();
      await service.database.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
