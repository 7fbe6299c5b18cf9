// Step-up's own throttles and budgets (docs/AUTH.md, "Step-up") as attackers try them, on the real
// service and PostgreSQL: a stranger behind the office's address, a flood of refusals with a stolen
// token, parallel challenges, and a session revoked while its password changes.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, stepUp, totpCode } from './support/second-factor.js';
import { SoftAuthenticator } from './support/passkey.js';
import { ManualClock } from '../src/clock.js';
import { STEP_UP_REFUSALS_PER_SESSION, STEP_UP_REFUSAL_WINDOW_S } from '../src/auth/sessions/step-up-refusals.js';
import { budget } from './support/budgets.js';
import { interleaved } from './support/interleave.js';
import { MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION } from '../src/auth/second-factors/passkeys.js';

// Each test makes at most three people and signs in, or fails to, at most ten times.
vi.setConfig({ testTimeout: budget({ passwordHash: 14 }) });

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
type App = Parameters<typeof request>[0];

const eventsOf = async (userId: string, type: string) =>
  (await database.db.selectFrom('security_events').select('details').where('user_id', '=', userId).where('type', '=', type).orderBy('id').execute()).map((e) => e.details);

/** A person whose only factor is a passkey, signed in, with no proof on the session. */
async function passkeyPerson(app: App, clock: ManualClock) {
  const user = await createUser(database.db);
  const set = await signIn(app, user.email, user.password);
  await database.db.updateTable('sessions').set({ stepped_up_at: clock.now(), step_up_method: 'password' }).where('user_id', '=', user.id).execute();
  const authenticator = new SoftAuthenticator();
  const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
  const registered = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Laptop', credential: authenticator.register(started.body.options) });
  if (registered.status !== 201) throw new Error(`POST /me/passkeys answered ${registered.status}: ${registered.text}`);
  await database.db.updateTable('sessions').set({ stepped_up_at: null, step_up_method: null }).where('user_id', '=', user.id).execute();
  return { user, token: set.access_token, authenticator };
}

async function passkeyChallenge(app: App, token: string): Promise<string> {
  const res = await request(app).post('/sessions/current/step-up/passkey').set(auth(token));
  expect(res.status).toBe(201);
  return res.body.options.challenge as string;
}

/** A challenge no one asked for: what a thief sends for free. */
const madeUpChallenge = () => randomBytes(32).toString('base64url');

describe('step-up: throttles of their own', () => {
  it("office NAT stranger: an account-less stranger's failed sign-ins from the office address block nobody's passkey or code step-up", async () => {
    const clock = new ManualClock(new Date('2027-01-05T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { SIGN_IN_MAX_FAILURES_PER_IP: '3' } });
    const withPasskey = await passkeyPerson(app, clock);
    const withCode = await createUser(database.db);
    const codeSession = await signIn(app, withCode.email, withCode.password);
    const { secret } = await enrolTotp(app, codeSession.access_token, clock, withCode.password);
    await database.db.updateTable('sessions').set({ stepped_up_at: null, step_up_method: null }).where('user_id', '=', withCode.id).execute();

    // The stranger, behind the office's address, with no account: random e-mails until the address is blocked.
    for (let i = 0; i < 3; i++) expect((await request(app).post('/sessions').send({ session: { email: `${randomBytes(6).toString('hex')}@example.com`, password: 'not-the-password' } })).status).toBe(401);
    expect((await request(app).post('/sessions').send({ session: { email: `${randomBytes(6).toString('hex')}@example.com`, password: 'not-the-password' } })).status).toBe(429);

    // Everyone behind that address still steps up.
    const byPasskey = await stepUp(app, withPasskey.token, { passkey: withPasskey.authenticator.assert(await passkeyChallenge(app, withPasskey.token)) });
    expect(byPasskey.status).toBe(200);
    expect(byPasskey.body.method).toBe('passkey');
    clock.advance(30_000);
    const byCode = await stepUp(app, codeSession.access_token, { totp_code: totpCode(secret, clock.now()) });
    expect(byCode.status).toBe(200);
    expect(byCode.body.method).toBe('totp');
    // The address's failures go: the tests after this one share it.
    await database.db.deleteFrom('sign_in_failures').execute();
  });

  it("journal flood with a stolen token: past the session's budget, refusals (made-up challenges among them) write one sign_in_throttled per lock window and nothing else", async () => {
    const clock = new ManualClock(new Date('2027-01-06T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const p = await passkeyPerson(app, clock);
    const statuses: number[] = [];
    for (let i = 0; i < STEP_UP_REFUSALS_PER_SESSION + 5; i++) {
      clock.advance(1000);
      // No challenge asked for: answers cost the thief nothing but a request each.
      statuses.push((await stepUp(app, p.token, { passkey: p.authenticator.assert(madeUpChallenge()) })).status);
    }
    expect(statuses).toEqual([...Array<number>(STEP_UP_REFUSALS_PER_SESSION).fill(400), 429, 429, 429, 429, 429]);
    // A code is refused unchecked too, and writes nothing.
    const code = await stepUp(app, p.token, { recovery_code: 'not-a-code' });
    expect(code.status).toBe(429);
    expectContractResponse(code, 'POST', '/sessions/current/step-up');
    expect(Number(code.headers['retry-after'])).toBe(STEP_UP_REFUSAL_WINDOW_S - STEP_UP_REFUSALS_PER_SESSION - 4);
    expect(await eventsOf(p.user.id, 'second_factor_failed')).toHaveLength(STEP_UP_REFUSALS_PER_SESSION);
    expect(await eventsOf(p.user.id, 'sign_in_throttled')).toEqual([{ limit: 'step_up_session', retry_after: STEP_UP_REFUSAL_WINDOW_S - STEP_UP_REFUSALS_PER_SESSION }]);

    // Once the oldest refusal has left the window, the session answers again: a good answer steps up.
    // (The refusals are moved back in time: the access token lives less than the window.)
    await database.db.updateTable('step_up_refusals').set((eb) => ({ refused_at: sql<Date>`${eb.ref('refused_at')} - make_interval(secs => ${STEP_UP_REFUSAL_WINDOW_S - 4})` })).execute();
    expect((await stepUp(app, p.token, { passkey: p.authenticator.assert(await passkeyChallenge(app, p.token)) })).status).toBe(200);
    // A new lock window is journalled once again.
    for (let i = 0; i < STEP_UP_REFUSALS_PER_SESSION + 2; i++) {
      clock.advance(1000);
      await stepUp(app, p.token, { passkey: p.authenticator.assert(madeUpChallenge()) });
    }
    expect(await eventsOf(p.user.id, 'sign_in_throttled')).toHaveLength(2);
  });

  it('challenge budget overrun: parallel step-up beginnings of one session on a pooled PostgreSQL get no more than the budget', async () => {
    const clock = new ManualClock(new Date('2027-01-07T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const p = await passkeyPerson(app, clock);
    // Each challenge's insertion made slow (a busy database): the window between a count and its
    // insert, which parallel requests on other connections used to slip through, held open.
    await sql`create function slow_insert() returns trigger language plpgsql as $$ begin perform pg_sleep(0.1); return new; end $$`.execute(database.db);
    await sql`create trigger slow_step_up_challenges before insert on passkey_challenges for each row execute function slow_insert()`.execute(database.db);
    const answers = await Promise.all(Array.from({ length: 2 * MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION }, () => request(app).post('/sessions/current/step-up/passkey').set(auth(p.token))));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array<number>(MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION).fill(201), ...Array<number>(MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION).fill(429)]);
    const kept = await database.db.selectFrom('passkey_challenges').select('challenge').where('user_id', '=', p.user.id).where('purpose', '=', 'step_up').execute();
    expect(kept).toHaveLength(MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION);
    await sql`drop trigger slow_step_up_challenges on passkey_challenges`.execute(database.db);
    await sql`drop function slow_insert()`.execute(database.db);
  });

  it('revoked while changing the password: a session revoked while the new password hashes changes nothing, 401', async () => {
    const clock = new ManualClock(new Date('2027-01-08T10:00:00.000Z'));
    const between = interleaved(database.db);
    const { app } = createTestApp(between.db, { clock });
    const person = await createUser(database.db);
    const stolen = await signIn(app, person.email, person.password);
    clock.advance(1000); // the sessions in the order they were opened
    const owners = await signIn(app, person.email, person.password);
    const before = await database.db.selectFrom('users').select('password_hash').where('id', '=', person.id).executeTakeFirstOrThrow();
    const [stolenSession] = await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).orderBy('created_at').orderBy('id').execute();
    // The owner, seeing the theft, ends the stolen session from their other device while the thief's change is hashing.
    between.before(() => database.db.updateTable('sessions').set({ revoked_at: clock.now(), revoked_reason: 'revoked_by_user' }).where('id', '=', stolenSession!.id).execute());
    const res = await request(app).put('/me/password').set(auth(stolen.access_token)).send({ current_password: person.password, new_password: 'the thief chose this one, long enough' });
    expect(between.ran).toBe(true); // the revocation ran, between authentication and the change
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    expectContractResponse(res, 'PUT', '/me/password');
    expect(await database.db.selectFrom('users').select('password_hash').where('id', '=', person.id).executeTakeFirstOrThrow()).toEqual(before);
    const sessions = await database.db.selectFrom('sessions').select(['revoked_at', 'stepped_up_at']).where('user_id', '=', person.id).orderBy('created_at').orderBy('id').execute();
    expect(sessions.map((x) => x.stepped_up_at)).toEqual([null, null]);
    expect((await request(app).get('/me').set(auth(owners.access_token))).status).toBe(200);
    expect(await eventsOf(person.id, 'password_changed')).toEqual([]);
  });
});
