// The daily cap on wrong authenticator-app codes (docs/AUTH.md, "The daily cap on wrong codes"),
// as an attacker who knows the password tries it: guessing codes across many challenges, spaced
// past the sign-in throttle's window, on two service instances sharing the database. Past
// CODE_FAILURES_PER_DAY wrong codes in a rolling day, a code of the app is refused even when right;
// a recovery code still opens; an administrator's reset clears the count. On real PostgreSQL.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { captureLogs, createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, passwordStep, secondStep, stepUp, totpCode } from './support/second-factor.js';
import { adminRoleId } from './support/access-fixtures.js';
import { ManualClock } from '../src/clock.js';
import { CODE_FAILURES_PER_DAY } from '../src/auth/second-factors/service.js';
import { budget } from './support/budgets.js';

// A test signs in (or takes a password step) at most eight times (test/support/budgets.ts).
vi.setConfig({ testTimeout: budget({ passwordHash: 10 }) });

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-27T10:00:00.000Z');
const PAST_THROTTLE_WINDOW_MS = 16 * 60_000;
const auth = (token: string) => ({ authorization: `Bearer ${token}` });

const eventsOf = (userId: string, type: string) =>
  database.db.selectFrom('security_events').select(['details', 'actor_type']).where('user_id', '=', userId).where('type', '=', type).orderBy('id').execute();
const failureRows = async (userId: string) => (await database.db.selectFrom('second_factor_code_failures').select('id').where('user_id', '=', userId).execute()).length;

/** A person with an authenticator app, and two service instances on one database (as two processes would be). */
async function setUp() {
  const clock = new ManualClock(START);
  const logs = captureLogs();
  const one = createTestApp(database.db, { clock, logger: logs.logger }).app;
  const two = createTestApp(database.db, { clock, logger: logs.logger }).app;
  const person = await createUser(database.db);
  const set = await signIn(one, person.email, person.password);
  const { secret, recoveryCodes } = await enrolTotp(one, set.access_token, clock, person.password);
  /** A code the app does not show now. */
  const wrongCode = () => totpCode(secret, new Date(clock.now().getTime() + 3_600_000));
  /** The stolen session kept alive across the test's hours (an access token lasts 10 minutes). */
  const tokens = { access: set.access_token, refresh: set.refresh_token };
  const refresh = async () => {
    const res = await request(one).post('/tokens').set(auth(tokens.access)).send({ refresh_token: tokens.refresh });
    if (res.status !== 201 && res.status !== 200) throw new Error(`POST /tokens answered ${res.status}: ${res.text}`);
    tokens.access = res.body.access_token;
    tokens.refresh = res.body.refresh_token;
    return tokens.access;
  };
  return { clock, logs, apps: [one, two] as const, person, refresh, secret, recoveryCodes, wrongCode };
}

describe('the daily cap on wrong codes', () => {
  it('attack: guessing codes across many challenges and two processes, spaced past the throttle, stops at the cap; a right code past it is refused (fails before the cap: the right code signed in)', async () => {
    const { clock, logs, apps, person, secret, recoveryCodes, wrongCode } = await setUp();
    const sent: string[] = [];
    let guesses = 0;
    for (let round = 0; guesses < CODE_FAILURES_PER_DAY; round++) {
      clock.advance(PAST_THROTTLE_WINDOW_MS);
      const app = apps[round % 2]!;
      const challenge_token = await passwordStep(app, person.email, person.password);
      // Fewer than the 5 wrong codes that wear a challenge out: the attacker takes a new one each time.
      for (let i = 0; i < 4 && guesses < CODE_FAILURES_PER_DAY; i++, guesses++) {
        const code = wrongCode();
        sent.push(code);
        const res = await secondStep(app, { challenge_token, totp_code: code });
        expect(res.status).toBe(401);
        expect(res.body.code).toBe('invalid_second_factor');
      }
    }
    expect(await failureRows(person.id)).toBe(CODE_FAILURES_PER_DAY);

    clock.advance(PAST_THROTTLE_WINDOW_MS);
    const challenge_token = await passwordStep(apps[1], person.email, person.password);
    const right = totpCode(secret, clock.now());
    sent.push(right);
    const refused = await secondStep(apps[1], { challenge_token, totp_code: right });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('second_factor_locked');
    expectContractResponse(refused, 'POST', '/sessions/second-factor');
    // Not a guess: no more failures counted, the challenge not worn.
    expect(await failureRows(person.id)).toBe(CODE_FAILURES_PER_DAY);

    // Reaching the cap is in the audit journal, once.
    expect(await eventsOf(person.id, 'second_factor_locked')).toEqual([{ details: { failures: CODE_FAILURES_PER_DAY, during: 'sign_in' }, actor_type: 'anonymous' }]);
    // A recovery code still opens, on the same challenge.
    const recovered = await secondStep(apps[1], { challenge_token, recovery_code: recoveryCodes[0]! });
    expect(recovered.status).toBe(201);

    // The owner sees it on their Security page.
    const overview = await request(apps[0]).get('/me/second-factors').set(auth(recovered.body.access_token));
    expect(overview.status).toBe(200);
    expectContractResponse(overview, 'GET', '/me/second-factors');
    expect(overview.body.code_failures.in_last_day).toBe(CODE_FAILURES_PER_DAY);
    expect(overview.body.code_failures.limit).toBe(CODE_FAILURES_PER_DAY);
    expect(overview.body.code_failures.locked_until).toBe(new Date(START.getTime() + PAST_THROTTLE_WINDOW_MS + 24 * 3600_000).toISOString());

    // No code, right or wrong, is in any log line.
    const text = logs.text();
    for (const code of sent) expect(text).not.toContain(code);
    expect(text).not.toContain(recoveryCodes[0]!);

    // A rolling day: once the oldest failures are a day old, the app's codes are judged again.
    clock.advance(24 * 3600_000);
    const later = await passwordStep(apps[0], person.email, person.password);
    expect((await secondStep(apps[0], { challenge_token: later, totp_code: totpCode(secret, clock.now()) })).status).toBe(201);
  });

  it('attack: wrong codes at step-up with a stolen session count against the same cap; past it the right code steps up no more, a recovery code does', async () => {
    const { clock, apps, person, refresh, secret, recoveryCodes, wrongCode } = await setUp();
    let token = '';
    for (let i = 0; i < CODE_FAILURES_PER_DAY; i++) {
      // Spaced past the sign-in throttle, which wrong step-up codes count against too.
      if (i % 4 === 0) {
        clock.advance(PAST_THROTTLE_WINDOW_MS);
        token = await refresh();
      }
      const res = await stepUp(apps[i % 2]!, token, { totp_code: wrongCode() });
      expect(res.status).toBe(400);
    }
    clock.advance(PAST_THROTTLE_WINDOW_MS);
    token = await refresh();
    const right = await stepUp(apps[0], token, { totp_code: totpCode(secret, clock.now()) });
    expect(right.status).toBe(403);
    expect(right.body.code).toBe('second_factor_locked');
    expectContractResponse(right, 'POST', '/sessions/current/step-up');
    expect((await eventsOf(person.id, 'second_factor_locked')).map((e) => e.details)).toEqual([{ failures: CODE_FAILURES_PER_DAY, during: 'step_up' }]);
    // The cap is the person's: the sign-in's code is refused as well.
    const challenge_token = await passwordStep(apps[1], person.email, person.password);
    expect((await secondStep(apps[1], { challenge_token, totp_code: totpCode(secret, clock.now()) })).body.code).toBe('second_factor_locked');
    const recovered = await stepUp(apps[0], token, { recovery_code: recoveryCodes[1]! });
    expect(recovered.status).toBe(200);
  });

  it("an administrator's reset of the person's second factors clears the count", async () => {
    const { clock, apps, person, wrongCode } = await setUp();
    for (let round = 0; round < 3; round++) {
      clock.advance(PAST_THROTTLE_WINDOW_MS);
      const challenge_token = await passwordStep(apps[0], person.email, person.password);
      for (let i = 0; i < 4; i++) await secondStep(apps[0], { challenge_token, totp_code: wrongCode() });
    }
    expect(await failureRows(person.id)).toBeGreaterThanOrEqual(CODE_FAILURES_PER_DAY);
    const admin = await createUser(database.db);
    await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: await adminRoleId(database.db) }).execute();
    const adminSet = await signIn(apps[1], admin.email, admin.password);
    await database.db.updateTable('sessions').set({ stepped_up_at: clock.now(), step_up_method: 'password' }).where('user_id', '=', admin.id).execute();
    const reset = await request(apps[1]).delete(`/users/${person.id}/second-factors`).set(auth(adminSet.access_token));
    expect(reset.status).toBe(204);
    expect(await failureRows(person.id)).toBe(0);
  });
});
