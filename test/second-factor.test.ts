// Second factors through the API, as an attacker would try them: an authenticator app (TOTP),
// recovery codes, and the second step of signing in, on the real service and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { sweep } from '../src/maintenance/sweeper.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, passwordStep, secondStep, signInWithTotp, stepUp, totpCode } from './support/second-factor.js';
import { ManualClock } from '../src/clock.js';
import { budget } from './support/budgets.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

/** A step boundary, so that "the same 30 seconds" is unambiguous. */
const START = new Date('2026-12-15T10:00:00.000Z');

async function setUp(env: Record<string, string> = {}) {
  const clock = new ManualClock(START);
  const service = createTestApp(database.db, { clock, env });
  const person = await createUser(database.db);
  const set = await signIn(service.app, person.email, person.password);
  const { secret, recoveryCodes } = await enrolTotp(service.app, set.access_token, clock, person.password);
  clock.advance(30_000); // the enrolment's code is used up: the tests sign in with the next one
  return { ...service, clock, person, set, secret, recoveryCodes };
}

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const eventsOf = (userId: string, type: string) =>
  database.db.selectFrom('security_events').selectAll().where('user_id', '=', userId).where('type', '=', type).orderBy('id').execute();

// Sign-ins and step-ups by password: argon2, slow on a busy machine.
const HASHES = { timeout: budget({ passwordHash: 6 }) };

describe('enrolling an authenticator app', HASHES, () => {
  it('answers the key once, puts it in force only with a valid code, and gives 10 recovery codes', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    expect((await stepUp(app, access_token, { password: person.password })).status).toBe(200);

    const started = await request(app).post('/me/totp').set(auth(access_token));
    expect(started.status).toBe(201);
    expectContractResponse(started, 'POST', '/me/totp');
    expect(started.headers['cache-control']).toBe('no-store');
    expect(started.body.otpauth_uri).toContain(`secret=${started.body.secret}`);
    expect(started.body.otpauth_uri).toMatch(/^otpauth:\/\/totp\/.*algorithm=SHA1&digits=6&period=30/);

    // Not in force yet: the password alone still signs in.
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(201);
    const pending = await request(app).get('/me/second-factors').set(auth(access_token));
    expect(pending.body).toEqual({ required: false, totp: null, recovery_codes_remaining: 0, code_failures: { in_last_day: 0, limit: 10, locked_until: null } });

    const wrong = await request(app).post('/me/totp/confirm').set(auth(access_token)).send({ totp_code: totpCode(started.body.secret, new Date(START.getTime() + 300_000)) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_second_factor');
    expectContractResponse(wrong, 'POST', '/me/totp/confirm');

    const confirmed = await request(app).post('/me/totp/confirm').set(auth(access_token)).send({ totp_code: totpCode(started.body.secret, clock.now()) });
    expect(confirmed.status).toBe(200);
    expectContractResponse(confirmed, 'POST', '/me/totp/confirm');
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);

    const overview = await request(app).get('/me/second-factors').set(auth(access_token));
    expectContractResponse(overview, 'GET', '/me/second-factors');
    expect(overview.body).toEqual({ required: false, totp: { enrolled_at: START.toISOString(), last_used_at: null }, recovery_codes_remaining: 10, code_failures: { in_last_day: 0, limit: 10, locked_until: null } });
    // Enrolling again needs the old one removed first (and, now that there is a factor, a proof by it).
    expect((await stepUp(app, access_token, { recovery_code: confirmed.body.recovery_codes[0] })).status).toBe(200);
    const again = await request(app).post('/me/totp').set(auth(access_token));
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('totp_already_enrolled');
    expect((await eventsOf(person.id, 'second_factor_enrolled')).map((e) => e.details)).toEqual([{ method: 'totp' }]);
    expect((await eventsOf(person.id, 'second_factor_failed')).map((e) => e.details)).toEqual([{ method: 'totp', during: 'enrolment' }]);
  });

  it('stores the key encrypted, and never answers it again', async () => {
    const { app, person, set, secret } = await setUp();
    const row = await database.db.selectFrom('second_factors').selectAll().where('user_id', '=', person.id).executeTakeFirstOrThrow();
    const stored = row.totp_secret_sealed!;
    const raw = Buffer.from(secret.replace(/=+$/, ''), 'latin1');
    expect(stored.includes(raw)).toBe(false);
    expect(stored.toString('latin1')).not.toContain(secret);
    const overview = await request(app).get('/me/second-factors').set(auth(set.access_token));
    expect(overview.text).not.toContain(secret);
  });
});

describe('signing in with a second factor', HASHES, () => {
  it('keeps the seed\'s answer for a person without a second factor', async () => {
    const { app } = createTestApp(database.db);
    const person = await createUser(database.db);
    const res = await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
  });

  it('password right but no code: no token set, no session, a challenge only', async () => {
    const { app, person } = await setUp();
    const before = await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).execute();
    const res = await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } });
    expect(res.status).toBe(202);
    expectContractResponse(res, 'POST', '/sessions');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toEqual({ second_factor: { challenge_token: expect.stringMatching(/^boc_/), expires_in: 300, methods: ['totp', 'recovery_code'] } });
    expect(res.text).not.toMatch(/bo[ar]_/);
    const after = await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).execute();
    expect(after).toEqual(before);
    // The challenge token is no access token.
    expect((await request(app).get('/me').set(auth(res.body.second_factor.challenge_token))).status).toBe(401);
  });

  it('signs in with the code of the moment, and the session says how', async () => {
    const { app, clock, person, secret } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    const res = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions/second-factor');
    expect(res.headers['cache-control']).toBe('no-store');
    const sessions = await request(app).get('/sessions').set(auth(res.body.access_token));
    expectContractResponse(sessions, 'GET', '/sessions');
    const current = sessions.body.data.find((s: { current: boolean }) => s.current);
    expect(current.authentication_method).toBe('password_totp');
    expect(sessions.body.data.find((s: { current: boolean }) => !s.current).authentication_method).toBe('password');
  });

  it('accepts a code of the step before or after (clock drift), not two steps away', async () => {
    const { app, clock, person, secret } = await setUp();
    clock.advance(60_000);
    const late = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(secret, new Date(clock.now().getTime() - 30_000)) });
    expect(late.status).toBe(201);
    clock.advance(60_000);
    const tooOld = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(secret, new Date(clock.now().getTime() - 60_000)) });
    expect(tooOld.status).toBe(401);
    expect(tooOld.body.code).toBe('invalid_second_factor');
  });

  it('the same code twice: the second is refused, even within its 30 seconds', async () => {
    const { app, clock, person, secret } = await setUp();
    const code = totpCode(secret, clock.now());
    expect((await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: code })).status).toBe(201);
    clock.advance(5_000);
    const replay = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: code });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('invalid_second_factor');
    expectContractResponse(replay, 'POST', '/sessions/second-factor');
    // Nor an older code once a newer one was used.
    clock.advance(30_000);
    expect((await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(secret, clock.now()) })).status).toBe(201);
    const older = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(secret, new Date(clock.now().getTime() - 30_000)) });
    expect(older.status).toBe(401);
  });

  it('the same code raced twice: exactly one sign-in', async () => {
    const { app, clock, person, secret } = await setUp();
    const code = totpCode(secret, clock.now());
    const challenges = await Promise.all([passwordStep(app, person.email, person.password), passwordStep(app, person.email, person.password)]);
    const answers = await Promise.all(challenges.map((challenge_token) => secondStep(app, { challenge_token, totp_code: code })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 401]);
  });

  it('a code from the previous enrolment is refused', async () => {
    const { app, clock, person, set, secret: oldSecret, recoveryCodes } = await setUp();
    expect((await stepUp(app, set.access_token, { recovery_code: recoveryCodes[9]! })).status).toBe(200);
    expect((await request(app).delete('/me/totp').set(auth(set.access_token))).status).toBe(204);
    expect((await eventsOf(person.id, 'second_factor_removed')).length).toBe(1);
    const { secret: newSecret } = await enrolTotp(app, set.access_token, clock);
    clock.advance(30_000);
    const old = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(oldSecret, clock.now()) });
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('invalid_second_factor');
    expect(totpCode(oldSecret, clock.now())).not.toBe(totpCode(newSecret, clock.now()));
    expect((await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), totp_code: totpCode(newSecret, clock.now()) })).status).toBe(201);
  });

  it('a recovery code twice: it works once, in any case and without its dash', async () => {
    const { app, person, recoveryCodes } = await setUp();
    const code = recoveryCodes[3]!;
    const first = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: code.toUpperCase().replace('-', ' ') });
    expect(first.status).toBe(201);
    const sessions = await request(app).get('/sessions').set(auth(first.body.access_token));
    expect(sessions.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('password_recovery_code');
    const second = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: code });
    expect(second.status).toBe(401);
    expect(second.body.code).toBe('invalid_second_factor');
    expect((await eventsOf(person.id, 'recovery_code_used')).map((e) => e.details)).toEqual([{ remaining: 9 }]);
    const overview = await request(app).get('/me/second-factors').set(auth(first.body.access_token));
    expect(overview.body.recovery_codes_remaining).toBe(9);
  });

  it('new recovery codes void the old ones', async () => {
    const { app, person, set, recoveryCodes } = await setUp();
    expect((await stepUp(app, set.access_token, { recovery_code: recoveryCodes[9]! })).status).toBe(200);
    const res = await request(app).post('/me/recovery-codes').set(auth(set.access_token));
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/me/recovery-codes');
    expect(res.body.recovery_codes).toHaveLength(10);
    const old = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: recoveryCodes[0]! });
    expect(old.status).toBe(401);
    const fresh = await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: res.body.recovery_codes[0] });
    expect(fresh.status).toBe(201);
    expect((await eventsOf(person.id, 'recovery_codes_regenerated')).length).toBe(1);
  });

  it('recovery codes need a second factor, and go with the last one', async () => {
    const { app, person, set, recoveryCodes } = await setUp();
    expect((await stepUp(app, set.access_token, { recovery_code: recoveryCodes[9]! })).status).toBe(200);
    expect((await request(app).delete('/me/totp').set(auth(set.access_token))).status).toBe(204);
    const none = await request(app).post('/me/recovery-codes').set(auth(set.access_token));
    expect(none.status).toBe(409);
    expect(none.body.code).toBe('no_second_factor');
    expect(await database.db.selectFrom('recovery_codes').select('digest').where('user_id', '=', person.id).execute()).toEqual([]);
    // The password alone signs in again.
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(201);
    expect((await request(app).delete('/me/totp').set(auth(set.access_token))).status).toBe(404);
  });

  it('brute force of codes: wrong codes wear the challenge out and count against the sign-in throttle', async () => {
    const { app, clock, person, secret } = await setUp();
    const wrong = (at: number) => totpCode(secret, new Date(clock.now().getTime() + at * 3_600_000));
    // 1 failure for the password step (until the second succeeds), then 5 wrong codes.
    let challenge_token = await passwordStep(app, person.email, person.password);
    for (let i = 1; i <= 5; i++) {
      const res = await secondStep(app, { challenge_token, totp_code: wrong(i) });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('invalid_second_factor');
    }
    // The challenge is worn out: even the right code is refused.
    const worn = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(worn.status).toBe(401);
    expect(worn.body.code).toBe('invalid_challenge');
    expectContractResponse(worn, 'POST', '/sessions/second-factor');
    // 6 failures so far; a new challenge (7) and three wrong codes (10) reach the pair limit.
    challenge_token = await passwordStep(app, person.email, person.password);
    for (let i = 6; i <= 8; i++) expect((await secondStep(app, { challenge_token, totp_code: wrong(i) })).status).toBe(401);
    const blocked = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(blocked.status).toBe(429);
    expectContractResponse(blocked, 'POST', '/sessions/second-factor');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // And the password step too, from this address.
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(429);
    const failures = await eventsOf(person.id, 'second_factor_failed');
    expect(failures).toHaveLength(8);
    expect(failures[0]).toMatchObject({ actor_type: 'anonymous', details: { method: 'totp', during: 'sign_in' } });
    expect((await eventsOf(person.id, 'sign_in_throttled')).length).toBeGreaterThan(0);
    // From another address the owner still signs in.
    const elsewhere = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'true' } }).app;
    const step = await request(elsewhere).post('/sessions').set('x-forwarded-for', '198.51.100.77').send({ session: { email: person.email, password: person.password } });
    expect(step.status).toBe(202);
    const done = await request(elsewhere).post('/sessions/second-factor').set('x-forwarded-for', '198.51.100.77').send({ challenge_token: step.body.second_factor.challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(done.status).toBe(201);
  });

  it('a wrong code at enrolment counts against the throttle too', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock, env: { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '3' } });
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    expect((await stepUp(app, access_token, { password: person.password })).status).toBe(200);
    const { body } = await request(app).post('/me/totp').set(auth(access_token));
    for (let i = 1; i <= 3; i++) {
      expect((await request(app).post('/me/totp/confirm').set(auth(access_token)).send({ totp_code: totpCode(body.secret, new Date(START.getTime() + i * 3_600_000)) })).status).toBe(400);
    }
    const blocked = await request(app).post('/me/totp/confirm').set(auth(access_token)).send({ totp_code: totpCode(body.secret, clock.now()) });
    expect(blocked.status).toBe(429);
    expectContractResponse(blocked, 'POST', '/me/totp/confirm');
  });

  it('a challenge token replayed after it signed in is refused', async () => {
    const { app, clock, person, secret } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    expect((await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) })).status).toBe(201);
    clock.advance(30_000);
    const replay = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(replay.status).toBe(401);
    expect(replay.body.code).toBe('invalid_challenge');
  });

  it('a challenge token dies after 5 minutes', async () => {
    const { app, clock, person, secret } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    clock.advance(301_000);
    const late = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(late.status).toBe(401);
    expect(late.body.code).toBe('invalid_challenge');
    // And the sweep deletes it.
    const swept = await sweep(database.db, clock.now(), testConfig().sweep.policy);
    expect(swept.signInChallenges).toBeGreaterThanOrEqual(1);
    expect(await database.db.selectFrom('sign_in_challenges').select('id').where('user_id', '=', person.id).where('expires_at', '<=', clock.now()).execute()).toEqual([]);
  });

  it('a challenge token used for another account: another person\'s code or recovery code does not open it', async () => {
    const victim = await setUp();
    const attacker = await createUser(database.db);
    const { access_token } = await signIn(victim.app, attacker.email, attacker.password);
    const attackerFactor = await enrolTotp(victim.app, access_token, victim.clock, attacker.password);
    victim.clock.advance(30_000);
    // The attacker knows the victim's password, not their app: their own code and recovery code fail.
    const challenge_token = await passwordStep(victim.app, victim.person.email, victim.person.password);
    const withCode = await secondStep(victim.app, { challenge_token, totp_code: totpCode(attackerFactor.secret, victim.clock.now()) });
    expect(withCode.status).toBe(401);
    const withRecovery = await secondStep(victim.app, { challenge_token, recovery_code: attackerFactor.recoveryCodes[0]! });
    expect(withRecovery.status).toBe(401);
    // The attacker's own challenge opens only the attacker's account.
    const own = await signInWithTotp(victim.app, attacker, attackerFactor.secret, victim.clock);
    const me = await request(victim.app).get('/me').set(auth(own.access_token));
    expect(me.body.user.id).toBe(attacker.id);
  });

  it('refuses a malformed second step with 400, changing nothing', async () => {
    const { app, person, clock, secret } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    for (const body of [
      { challenge_token },
      { challenge_token, totp_code: '12345' },
      { challenge_token, totp_code: totpCode(secret, clock.now()), recovery_code: 'abcde-fghij' },
      { totp_code: totpCode(secret, clock.now()) },
    ]) {
      const res = await secondStep(app, body as never);
      expect(res.status).toBe(400);
      expectContractResponse(res, 'POST', '/sessions/second-factor');
    }
    expect((await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) })).status).toBe(201);
  });

  it('a disabled person cannot finish a sign-in begun before', async () => {
    const { app, clock, person, secret } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', person.id).execute();
    const res = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(res.status).toBe(401);
  });

  it('nothing of a secret in logs, answers or the audit journal', async () => {
    const { app, logs, clock, person, set, secret, recoveryCodes } = await setUp();
    const challenge_token = await passwordStep(app, person.email, person.password);
    const code = totpCode(secret, clock.now());
    await secondStep(app, { challenge_token, totp_code: '000000' === code ? '111111' : '000000' });
    await secondStep(app, { challenge_token, totp_code: code });
    await secondStep(app, { challenge_token: await passwordStep(app, person.email, person.password), recovery_code: recoveryCodes[0]! });
    expect((await stepUp(app, set.access_token, { recovery_code: recoveryCodes[9]! })).status).toBe(200);
    const regenerated = await request(app).post('/me/recovery-codes').set(auth(set.access_token));
    const journal = JSON.stringify(await database.db.selectFrom('security_events').selectAll().where('user_id', '=', person.id).execute());
    const overview = await request(app).get('/me/second-factors').set(auth(set.access_token));
    const audit = await request(app).get('/me/audit-events').set(auth(set.access_token));
    for (const text of [logs.text(), journal, overview.text, audit.text]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(challenge_token);
      expect(text).not.toContain(code);
      for (const recovery of [...recoveryCodes, ...regenerated.body.recovery_codes]) expect(text).not.toContain(recovery);
    }
  });
});
