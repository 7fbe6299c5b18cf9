// A passkey as a step-up proof (docs/AUTH.md, "Step-up"), as a thief holding a victim's access
// token tries it: POST /sessions/current/step-up/passkey gives options whose challenge is bound to
// the person and the session, good once; POST /sessions/current/step-up with `passkey` opens the
// step-up window only for an answer of one of the person's passkeys to such a challenge, with
// user verification and a counter moving forward. On the real service and PostgreSQL; answers are
// made by the software authenticator of test/support/passkey.ts.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { stepUp } from './support/second-factor.js';
import { SoftAuthenticator, type AuthenticatorOptions } from './support/passkey.js';
import { ManualClock } from '../src/clock.js';
import { STEP_UP_TTL_S } from '../src/auth/sessions/step-up.js';
import { MAX_LIVE_CHALLENGES_PER_ADDRESS, MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION } from '../src/auth/second-factors/passkeys.js';
import { liveChallengesFrom } from '../src/auth/second-factors/passkey-store.js';
import { budget } from './support/budgets.js';
import { interleaved } from './support/interleave.js';
import { STEP_UP_REFUSALS_PER_SESSION } from '../src/auth/sessions/step-up-refusals.js';

// Each test makes at most two people and signs in at most three times (test/support/budgets.ts).
vi.setConfig({ testTimeout: budget({ passwordHash: 6 }) });

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-27T10:00:00.000Z');
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
type App = Parameters<typeof request>[0];

/** The step-up state of every session of `userId`, oldest first. */
const proofsOf = (userId: string) =>
  database.db.selectFrom('sessions').select(['id', 'stepped_up_at', 'step_up_method']).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();

const failuresOf = async (userId: string) =>
  (await database.db.selectFrom('security_events').select('details').where('user_id', '=', userId).where('type', '=', 'second_factor_failed').orderBy('id').execute()).map((e) => e.details);

/** Grants every live session of `userId` a proof now (by the test's clock), as if stepped up, for the set-up's registration. */
const grantProof = (userId: string, clock: ManualClock) =>
  database.db.updateTable('sessions').set({ stepped_up_at: clock.now(), step_up_method: 'recovery_code' }).where('user_id', '=', userId).execute();
const dropProofs = (userId: string) => database.db.updateTable('sessions').set({ stepped_up_at: null, step_up_method: null }).where('user_id', '=', userId).execute();

/** A person whose only factor is a passkey, signed in, with no proof on the session. */
async function person(app: App, clock: ManualClock, options: AuthenticatorOptions = {}) {
  const user = await createUser(database.db);
  const set = await signIn(app, user.email, user.password);
  await grantProof(user.id, clock);
  const authenticator = new SoftAuthenticator(options);
  const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
  const registered = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Laptop', credential: authenticator.register(started.body.options) });
  if (registered.status !== 201) throw new Error(`POST /me/passkeys answered ${registered.status}: ${registered.text}`);
  await dropProofs(user.id);
  return { user, token: set.access_token, authenticator, passkeyId: registered.body.passkey.id as string };
}

function setUp() {
  const clock = new ManualClock(START);
  const { app } = createTestApp(database.db, { clock });
  return { app, clock };
}

async function startStepUp(app: App, token: string): Promise<string> {
  const res = await request(app).post('/sessions/current/step-up/passkey').set(auth(token));
  expect(res.status).toBe(201);
  return res.body.options.challenge as string;
}

/** A sensitive change (new recovery codes): 403 step_up_required without a fresh proof. */
const sensitiveChange = (app: App, token: string) => request(app).post('/me/recovery-codes').set(auth(token));

async function expectNotSteppedUp(app: App, token: string, userId: string) {
  const refused = await sensitiveChange(app, token);
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('step_up_required');
  expect((await proofsOf(userId)).every((s) => s.stepped_up_at === null)).toBe(true);
}

describe('a passkey proves a step-up', () => {
  it('a person whose only factor is a passkey steps up with it, and the sensitive change goes through', async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock, { synced: false });
    const refused = await sensitiveChange(app, p.token);
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'step_up_required', step_up_methods: ['passkey', 'recovery_code'] });

    const options = await request(app).post('/sessions/current/step-up/passkey').set(auth(p.token));
    expect(options.status).toBe(201);
    expectContractResponse(options, 'POST', '/sessions/current/step-up/passkey');
    expect(options.headers['cache-control']).toBe('no-store');
    expect(options.body.expires_in).toBe(300);
    expect(options.body.options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [{ id: p.authenticator.credentialId, type: 'public-key' }] });
    const [session] = await proofsOf(p.user.id);
    const stored = await database.db.selectFrom('passkey_challenges').selectAll().where('challenge', '=', options.body.options.challenge).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ purpose: 'step_up', user_id: p.user.id, session_id: session!.id });

    clock.advance(1000);
    const proof = await stepUp(app, p.token, { passkey: p.authenticator.assert(options.body.options.challenge) });
    expect(proof.status).toBe(200);
    expectContractResponse(proof, 'POST', '/sessions/current/step-up');
    expect(proof.body).toEqual({ method: 'passkey', valid_until: new Date(clock.now().getTime() + STEP_UP_TTL_S * 1000).toISOString() });
    expect(await proofsOf(p.user.id)).toEqual([{ id: session!.id, stepped_up_at: clock.now(), step_up_method: 'passkey' }]);
    const passkey = await database.db.selectFrom('second_factors').select(['sign_count', 'last_used_at']).where('id', '=', p.passkeyId).executeTakeFirstOrThrow();
    expect({ ...passkey, sign_count: Number(passkey.sign_count) }).toEqual({ sign_count: p.authenticator.signCount, last_used_at: clock.now() });
    const stepped = await database.db.selectFrom('security_events').select('details').where('user_id', '=', p.user.id).where('type', '=', 'session_stepped_up').execute();
    expect(stepped.map((e) => e.details)).toEqual([{ method: 'passkey' }]);
    expect((await sensitiveChange(app, p.token)).status).toBe(201);
  });

  it('works in every key style (the WebAuthn JSON itself is not inflected)', async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    const options = await request(app).post('/sessions/current/step-up/passkey').set(auth(p.token)).set('x-api-inflection', 'dash');
    expect(options.status).toBe(201);
    expect(options.body['expires-in']).toBe(300);
    const proof = await request(app)
      .post('/sessions/current/step-up')
      .set(auth(p.token))
      .set('x-api-inflection', 'pascal')
      .send({ Passkey: p.authenticator.assert(options.body.options.challenge) });
    expect(proof.status).toBe(200);
    expect(proof.body.Method).toBe('passkey');
  });

  it('a person without a passkey is answered 409 no_passkey, and a person with an app and a passkey is offered both', async () => {
    const { app, clock } = setUp();
    const user = await createUser(database.db);
    const set = await signIn(app, user.email, user.password);
    const res = await request(app).post('/sessions/current/step-up/passkey').set(auth(set.access_token));
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('no_passkey');
    expectContractResponse(res, 'POST', '/sessions/current/step-up/passkey');
    expect(await database.db.selectFrom('passkey_challenges').select('challenge').where('user_id', '=', user.id).execute()).toEqual([]);
    // With an authenticator app as well, the refusal offers both (and the recovery codes).
    const p = await person(app, clock);
    await database.db.insertInto('second_factors').values({ user_id: p.user.id, kind: 'totp', created_at: clock.now(), confirmed_at: clock.now(), totp_secret_sealed: Buffer.alloc(48), totp_key_id: 'k' }).execute();
    expect((await sensitiveChange(app, p.token)).body.step_up_methods).toEqual(['totp', 'passkey', 'recovery_code']);
  });
});

describe('attacks on the passkey step-up', () => {
  it("assertion of another person's passkey: the thief's own passkey does not step up the victim's stolen session", async () => {
    const { app, clock } = setUp();
    const victim = await person(app, clock);
    const thief = await person(app, clock);
    const challenge = await startStepUp(app, victim.token);
    const res = await stepUp(app, victim.token, { passkey: thief.authenticator.assert(challenge) });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_passkey');
    expectContractResponse(res, 'POST', '/sessions/current/step-up');
    await expectNotSteppedUp(app, victim.token, victim.user.id);
    // Recorded on the victim's account, without naming the thief's passkey.
    expect(await failuresOf(victim.user.id)).toEqual([{ method: 'passkey', during: 'step_up', reason: 'not_this_person' }]);
    // The challenge was used up by the attempt.
    expect((await stepUp(app, victim.token, { passkey: victim.authenticator.assert(challenge) })).status).toBe(400);
  });

  it('replayed assertion: an answer that stepped up once does not step up again once the window is over', async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    const challenge = await startStepUp(app, p.token);
    const answer = p.authenticator.assert(challenge);
    expect((await stepUp(app, p.token, { passkey: answer })).status).toBe(200);
    clock.advance((STEP_UP_TTL_S + 1) * 1000);
    const replayed = await stepUp(app, p.token, { passkey: answer });
    expect(replayed.status).toBe(400);
    expect(replayed.body.code).toBe('invalid_passkey');
    // A fresh signature over the used challenge is refused as well: the challenge is good once.
    const resigned = await stepUp(app, p.token, { passkey: p.authenticator.assert(challenge) });
    expect(resigned.status).toBe(400);
    expect((await sensitiveChange(app, p.token)).body.code).toBe('step_up_required');
    const [session] = await proofsOf(p.user.id);
    expect(session!.stepped_up_at!.getTime()).toBeLessThan(clock.now().getTime() - STEP_UP_TTL_S * 1000);
    expect(await failuresOf(p.user.id)).toEqual([
      { method: 'passkey', during: 'step_up', reason: 'invalid_challenge' },
      { method: 'passkey', during: 'step_up', reason: 'invalid_challenge' },
    ]);
  });

  it("challenge of another session: an answer to a challenge the owner's other session asked for does not step up the stolen one", async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    // The owner's other session (another device) begins a step-up; the thief holds the first session's token.
    clock.advance(1000); // the sessions are told apart by when they were opened
    const began = await request(app).post('/sessions/passkey/challenge');
    const other = (await request(app).post('/sessions/passkey').send({ credential: p.authenticator.assert(began.body.options.challenge) })).body as { access_token: string };
    const challenge = await startStepUp(app, other.access_token);
    const answer = p.authenticator.assert(challenge);
    const res = await stepUp(app, p.token, { passkey: answer });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('invalid_passkey');
    await expectNotSteppedUp(app, p.token, p.user.id);
    // The other session's challenge was left to it: its owner still steps up with that answer.
    expect((await stepUp(app, other.access_token, { passkey: answer })).status).toBe(200);
    const proofs = await proofsOf(p.user.id);
    expect(proofs.map((s) => s.step_up_method)).toEqual([null, 'passkey']);
  });

  it('counter gone backwards: an answer of a copied authenticator is refused and the stored counter stays', async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock, { synced: false });
    expect((await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token)) })).status).toBe(200);
    await dropProofs(p.user.id);
    const counter = p.authenticator.signCount;
    const copy = await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token), { signCount: counter - 1 }) });
    expect(copy.status).toBe(400);
    expect(copy.body.code).toBe('invalid_passkey');
    const same = await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token), { signCount: counter }) });
    expect(same.status).toBe(400);
    await expectNotSteppedUp(app, p.token, p.user.id);
    const stored = await database.db.selectFrom('second_factors').select('sign_count').where('id', '=', p.passkeyId).executeTakeFirstOrThrow();
    expect(Number(stored.sign_count)).toBe(counter);
    expect((await failuresOf(p.user.id)).map((d) => (d as { reason: string }).reason)).toEqual(['counter_regressed', 'counter_regressed']);
  });

  it('user not verified, or backup flags changed: refused, no step-up', async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    const unverified = await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token), { userVerified: false }) });
    expect(unverified.status).toBe(400);
    const flags = await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token), { backupEligible: false, backedUp: false }) });
    expect(flags.status).toBe(400);
    await expectNotSteppedUp(app, p.token, p.user.id);
    expect((await failuresOf(p.user.id)).map((d) => (d as { reason: string }).reason)).toEqual(['not_verified', 'backup_flags_changed']);
  });

  it("journal flood with a stolen access token: refused passkey answers count against the session's budget of refusals, and stop writing to the journal", async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    const statuses: number[] = [];
    for (let i = 0; i < STEP_UP_REFUSALS_PER_SESSION + 3; i++) {
      // Each refused answer is the thief's: user verification faked away (any refusal counts alike).
      statuses.push((await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token), { userVerified: false }) })).status);
    }
    expect(statuses).toEqual([...Array<number>(STEP_UP_REFUSALS_PER_SESSION).fill(400), 429, 429, 429]);
    // One second_factor_failed per counted refusal, nothing more past the budget but one
    // sign_in_throttled for the lock window (test/step-up-review-attacks.test.ts).
    expect(await failuresOf(p.user.id)).toHaveLength(STEP_UP_REFUSALS_PER_SESSION);
    // Past the budget even a good answer is not checked (as a right code is not): the owner steps up
    // from another session, or once the window has passed.
    const good = await stepUp(app, p.token, { passkey: p.authenticator.assert(await startStepUp(app, p.token)) });
    expect(good.status).toBe(429);
    expectContractResponse(good, 'POST', '/sessions/current/step-up');
    await expectNotSteppedUp(app, p.token, p.user.id);
    expect(await failuresOf(p.user.id)).toHaveLength(STEP_UP_REFUSALS_PER_SESSION);
  });

  it("budget exhaustion across ceremonies: an office NAT's passwordless sign-ins do not block a step-up, and a stolen session's step-ups block neither the sign-ins nor the owner's other session", async () => {
    const { app, clock } = setUp();
    const p = await person(app, clock);
    // The owner's other session (another device), by passkey.
    clock.advance(1000);
    const began = await request(app).post('/sessions/passkey/challenge');
    const other = (await request(app).post('/sessions/passkey').send({ credential: p.authenticator.assert(began.body.options.challenge) })).body as { access_token: string };

    // The thief, holding the first session's token, begins step-ups: its session's budget runs out...
    for (let i = 0; i < MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION; i++) await startStepUp(app, p.token);
    const stolenOut = await request(app).post('/sessions/current/step-up/passkey').set(auth(p.token));
    expect(stolenOut.status).toBe(429);
    expectContractResponse(stolenOut, 'POST', '/sessions/current/step-up/passkey');
    // ...and only its own: the owner's other session still steps up.
    await startStepUp(app, other.access_token);

    // The office behind the same address begins passwordless sign-ins up to the address's budget, untouched by the step-ups.
    const office = '127.0.0.1';
    const live = await liveChallengesFrom(database.db, office, clock.now());
    for (let i = live; i < MAX_LIVE_CHALLENGES_PER_ADDRESS; i++) expect((await request(app).post('/sessions/passkey/challenge')).status).toBe(201);
    expect((await request(app).post('/sessions/passkey/challenge')).status).toBe(429);
    // The address's budget spent does not block the owner's step-up, which completes.
    const challenge = await startStepUp(app, other.access_token);
    expect((await stepUp(app, other.access_token, { passkey: p.authenticator.assert(challenge) })).status).toBe(200);
    // The office's challenges go: the tests after this one share the address and the test clock's day.
    await database.db.deleteFrom('passkey_challenges').where('purpose', '=', 'sign_in').execute();
  });

  it('revoked while stepping up: a session revoked between its authentication and the passkey proof gets no proof, 401, and nothing is recorded', async () => {
    const clock = new ManualClock(START);
    const between = interleaved(database.db);
    const { app } = createTestApp(between.db, { clock });
    const p = await person(app, clock, { synced: false });
    const challenge = await startStepUp(app, p.token);
    const [session] = await proofsOf(p.user.id);
    const counter = await database.db.selectFrom('second_factors').select('sign_count').where('id', '=', p.passkeyId).executeTakeFirstOrThrow();
    // The owner, seeing the theft, ends the session from another device while the thief's proof is under way.
    between.before(() => database.db.updateTable('sessions').set({ revoked_at: clock.now(), revoked_reason: 'revoked_by_user' }).where('id', '=', session!.id).execute());
    const res = await stepUp(app, p.token, { passkey: p.authenticator.assert(challenge) });
    expect(between.ran).toBe(true); // the revocation ran, between authentication and the proof
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('invalid_token');
    expectContractResponse(res, 'POST', '/sessions/current/step-up');
    expect(await proofsOf(p.user.id)).toEqual([{ id: session!.id, stepped_up_at: null, step_up_method: null }]);
    const recorded = await database.db.selectFrom('security_events').select('type').where('user_id', '=', p.user.id).where('type', 'in', ['session_stepped_up', 'second_factor_failed']).execute();
    expect(recorded).toEqual([]);
    expect(await database.db.selectFrom('second_factors').select('sign_count').where('id', '=', p.passkeyId).executeTakeFirstOrThrow()).toEqual(counter);
  });
});
