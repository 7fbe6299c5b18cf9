// Passkeys (WebAuthn) through the API, as an attacker would try them, on the real service and
// PostgreSQL: registering, naming, listing and removing; the second step of a sign-in; the
// passwordless sign-in. Answers are made by a software authenticator (test/support/passkey.ts).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import request from 'supertest';
import pg from 'pg';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { secondStep } from './support/second-factor.js';
import { SoftAuthenticator, type AuthenticatorOptions } from './support/passkey.js';
import { adminRoleId } from './support/access-fixtures.js';
import { ManualClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { sweep } from '../src/maintenance/sweeper.js';
import { MAX_LIVE_CHALLENGES_PER_ADDRESS } from '../src/auth/second-factors/passkeys.js';
import { budget } from './support/budgets.js';
import { makeIdentityProvider } from './support/access-fixtures.js';

// Each test makes at most two people and signs in at most four times: six argon2 steps (test/support/budgets.ts).
vi.setConfig({ testTimeout: budget({ passwordHash: 6 }) });

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
  // Registering and removing a passkey need a fresh proof (step-up: test/step-up.test.ts); the
  // sessions of this file's people hold one that does not expire, except where a test takes it away.
  await sql`create function test_stepped_up() returns trigger language plpgsql as $$
    begin new.stepped_up_at := '2100-01-01'; new.step_up_method := 'recovery_code'; return new; end $$`.execute(database.db);
  await sql`create trigger test_stepped_up before insert on sessions for each row execute function test_stepped_up()`.execute(database.db);
});
afterAll(() => database.destroy());

const START = new Date('2026-12-19T10:00:00.000Z');
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
type App = Parameters<typeof request>[0];

const eventsOf = (userId: string, type: string) =>
  database.db.selectFrom('security_events').selectAll().where('user_id', '=', userId).where('type', '=', type).orderBy('id').execute();

/** Registers a passkey made by `authenticator` for the bearer of `accessToken`. */
async function registerPasskey(app: App, accessToken: string, authenticator: SoftAuthenticator, name = 'Laptop') {
  const started = await request(app).post('/me/passkeys/registration').set(auth(accessToken));
  if (started.status !== 201) throw new Error(`POST /me/passkeys/registration answered ${started.status}: ${started.text}`);
  const res = await request(app).post('/me/passkeys').set(auth(accessToken)).send({ name, credential: authenticator.register(started.body.options) });
  if (res.status !== 201) throw new Error(`POST /me/passkeys answered ${res.status}: ${res.text}`);
  return res.body as { passkey: { id: string }; recovery_codes: string[] };
}

async function setUp(authenticatorOptions: AuthenticatorOptions = {}, env: Record<string, string | undefined> = {}) {
  const clock = new ManualClock(START);
  const service = createTestApp(database.db, { clock, env });
  const person = await createUser(database.db);
  const set = await signIn(service.app, person.email, person.password);
  const authenticator = new SoftAuthenticator(authenticatorOptions);
  const registered = await registerPasskey(service.app, set.access_token, authenticator);
  return { ...service, clock, person, set, authenticator, passkeyId: registered.passkey.id, recoveryCodes: registered.recovery_codes };
}

describe('passkeys need a fresh proof', () => {
  it('attack: a stolen access token registers the thief\'s passkey (or removes the victim\'s): 403 step_up_required', async () => {
    const { app, set, passkeyId, person } = await setUp();
    await database.db.updateTable('sessions').set({ stepped_up_at: null, step_up_method: null }).where('user_id', '=', person.id).execute();
    const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
    expect(started.status).toBe(201);
    const thief = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Thief', credential: new SoftAuthenticator().register(started.body.options) });
    expect(thief.status).toBe(403);
    expect(thief.body.code).toBe('step_up_required');
    const removal = await request(app).delete(`/me/passkeys/${passkeyId}`).set(auth(set.access_token));
    expect(removal.status).toBe(403);
    expect(removal.body.code).toBe('step_up_required');
    const listed = await request(app).get('/me/passkeys').set(auth(set.access_token));
    expect(listed.body.data.map((p: { id: string }) => p.id)).toEqual([passkeyId]);
  });
});

/** The password step: the challenge token and the passkey's WebAuthn challenge. */
async function passwordStepWithPasskey(app: App, person: { email: string; password: string }) {
  const res = await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } });
  expect(res.status).toBe(202);
  return { challengeToken: res.body.second_factor.challenge_token as string, challenge: res.body.second_factor.passkey_options.challenge as string, body: res.body };
}

async function startPasswordless(app: App): Promise<string> {
  const res = await request(app).post('/sessions/passkey/challenge');
  expect(res.status).toBe(201);
  return res.body.options.challenge as string;
}

const passwordless = (app: App, credential: unknown) => request(app).post('/sessions/passkey').send({ credential });

describe('configuration', () => {
  it('defaults to make run on localhost:3000 and refuses an origin off the relying party', () => {
    expect(loadConfig({}).passkeys).toEqual({ rpId: 'localhost', rpName: 'Back office', origins: ['http://localhost:3000'] });
    expect(loadConfig({ PASSKEY_RP_ID: 'example.com', PASSKEY_ORIGINS: 'https://backoffice.example.com, https://example.com' }).passkeys.origins).toEqual(['https://backoffice.example.com', 'https://example.com']);
    expect(() => loadConfig({ PASSKEY_RP_ID: 'example.com', PASSKEY_ORIGINS: 'https://example.org' })).toThrow(/PASSKEY_ORIGINS/);
    expect(() => loadConfig({ PASSKEY_ORIGINS: 'http://localhost:3000/app' })).toThrow(/PASSKEY_ORIGINS/);
    expect(() => loadConfig({ PASSKEY_RP_ID: 'https://example.com' })).toThrow(/PASSKEY_RP_ID/);
  });
});

describe('registering passkeys', () => {
  it('answers creation options asking for a discoverable credential with user verification, and keeps the challenge server-side', async () => {
    const { app } = createTestApp(database.db);
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    const res = await request(app).post('/me/passkeys/registration').set(auth(access_token));
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/me/passkeys/registration');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body.expires_in).toBe(300);
    expect(res.body.options).toMatchObject({
      rp: { id: 'localhost', name: 'Back office' },
      user: { name: person.email },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
    });
    const stored = await database.db.selectFrom('passkey_challenges').selectAll().where('challenge', '=', res.body.options.challenge).executeTakeFirstOrThrow();
    expect(stored).toMatchObject({ purpose: 'registration', user_id: person.id });
  });

  it('registers several, named, lists them, renames one, and gives recovery codes with the first only', async () => {
    const { app, person, set, passkeyId, recoveryCodes, clock } = await setUp();
    expect(recoveryCodes).toHaveLength(10);
    clock.advance(1000);
    const second = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
    const key = new SoftAuthenticator({ synced: false });
    const registered = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Security key', credential: key.register(second.body.options) });
    expect(registered.status).toBe(201);
    expectContractResponse(registered, 'POST', '/me/passkeys');
    expect(registered.body).toEqual({
      passkey: { id: expect.any(String), name: 'Security key', created_at: clock.now().toISOString(), last_used_at: null, backup_eligible: false, backed_up: false },
      recovery_codes: [],
    });

    const listed = await request(app).get('/me/passkeys').set(auth(set.access_token));
    expectContractResponse(listed, 'GET', '/me/passkeys');
    expect(listed.body.data.map((p: { name: string; backup_eligible: boolean }) => [p.name, p.backup_eligible])).toEqual([
      ['Laptop', true],
      ['Security key', false],
    ]);
    expect(listed.text).not.toContain(key.credentialId);

    const renamed = await request(app).patch(`/me/passkeys/${passkeyId}`).set(auth(set.access_token)).send({ name: 'Work laptop' });
    expect(renamed.status).toBe(200);
    expectContractResponse(renamed, 'PATCH', '/me/passkeys/{id}');
    expect(renamed.body.name).toBe('Work laptop');

    expect((await eventsOf(person.id, 'second_factor_enrolled')).map((e) => e.details)).toEqual([
      { method: 'passkey', passkey_id: passkeyId, name: 'Laptop' },
      { method: 'passkey', passkey_id: registered.body.passkey.id, name: 'Security key' },
    ]);
    const [renaming] = await eventsOf(person.id, 'passkey_renamed');
    expect(renaming?.changes).toEqual({ before: { name: 'Laptop' }, after: { name: 'Work laptop' } });
    // Counted as a second factor: the password alone no longer signs in.
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(202);
  });

  it('keeps WebAuthn keys as they are in every key style', async () => {
    const { app } = createTestApp(database.db);
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    const res = await request(app).post('/me/passkeys/registration').set(auth(access_token)).set('x-api-inflection', 'dash');
    expect(res.status).toBe(201);
    expect(res.body['expires-in']).toBe(300);
    expect(res.body.options.pubKeyCredParams).toBeInstanceOf(Array);
    expect(res.body.options.authenticatorSelection.residentKey).toBe('required');
    const key = new SoftAuthenticator();
    const registered = await request(app).post('/me/passkeys').set(auth(access_token)).set('x-api-inflection', 'pascal').send({ Name: 'Phone', Credential: key.register(res.body.options) });
    expect(registered.status).toBe(201);
    expect(registered.body.Passkey.BackupEligible).toBe(true);
    expect(registered.body.RecoveryCodes).toHaveLength(10);
  });

  it('challenge reused: a registration challenge is good once', async () => {
    const { app } = createTestApp(database.db);
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    const started = await request(app).post('/me/passkeys/registration').set(auth(access_token));
    const first = await request(app).post('/me/passkeys').set(auth(access_token)).send({ name: 'A', credential: new SoftAuthenticator().register(started.body.options) });
    expect(first.status).toBe(201);
    const again = await request(app).post('/me/passkeys').set(auth(access_token)).send({ name: 'B', credential: new SoftAuthenticator().register(started.body.options) });
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_passkey');
    expectContractResponse(again, 'POST', '/me/passkeys');
  });

  it("challenge of another person: someone else's registration challenge does not register, nor use it up", async () => {
    const { app } = createTestApp(database.db);
    const victim = await createUser(database.db);
    const attacker = await createUser(database.db);
    const victimSet = await signIn(app, victim.email, victim.password);
    const attackerSet = await signIn(app, attacker.email, attacker.password);
    const started = await request(app).post('/me/passkeys/registration').set(auth(victimSet.access_token));
    const stolen = await request(app).post('/me/passkeys').set(auth(attackerSet.access_token)).send({ name: 'Mine', credential: new SoftAuthenticator().register(started.body.options) });
    expect(stolen.status).toBe(400);
    expect(await database.db.selectFrom('second_factors').select('id').where('user_id', '=', attacker.id).execute()).toEqual([]);
    const own = await request(app).post('/me/passkeys').set(auth(victimSet.access_token)).send({ name: 'Mine', credential: new SoftAuthenticator().register(started.body.options) });
    expect(own.status).toBe(201);
  });

  it('origin mismatch, no user verification, or an expired challenge: refused, nothing registered', async () => {
    const clock = new ManualClock(START);
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db);
    const { access_token } = await signIn(app, person.email, person.password);
    const attempt = async (make: (options: { challenge: string; user: { id: string } }) => unknown, wait = 0) => {
      const started = await request(app).post('/me/passkeys/registration').set(auth(access_token));
      clock.advance(wait);
      return request(app).post('/me/passkeys').set(auth(access_token)).send({ name: 'X', credential: make(started.body.options) });
    };
    const phishing = await attempt((o) => new SoftAuthenticator().register(o, { origin: 'https://backoffice.example.net' }));
    expect([phishing.status, phishing.body.code]).toEqual([400, 'invalid_passkey']);
    const unverified = await attempt((o) => new SoftAuthenticator().register(o, { userVerified: false }));
    expect([unverified.status, unverified.body.code]).toEqual([400, 'invalid_passkey']);
    const otherRp = await attempt((o) => new SoftAuthenticator({ rpId: 'example.net' }).register(o));
    expect([otherRp.status, otherRp.body.code]).toEqual([400, 'invalid_passkey']);
    const late = await attempt((o) => new SoftAuthenticator().register(o), 301_000);
    expect([late.status, late.body.code]).toEqual([400, 'invalid_passkey']);
    const garbage = await attempt(() => ({ id: 'x', response: { clientDataJSON: 'not json', attestationObject: 17 } }));
    expect([garbage.status, garbage.body.code]).toEqual([400, 'invalid_passkey']);
    expect(await database.db.selectFrom('second_factors').select('id').where('user_id', '=', person.id).execute()).toEqual([]);
    expect((await eventsOf(person.id, 'second_factor_failed')).map((e) => e.details)).toEqual(Array(3).fill({ method: 'passkey', during: 'enrolment' }));
  });

  it('the same credential twice is 409 passkey_already_registered', async () => {
    const { app, set, authenticator } = await setUp();
    const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
    const again = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Again', credential: authenticator.register(started.body.options) });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('passkey_already_registered');
    expectContractResponse(again, 'POST', '/me/passkeys');
  });
});

describe('security: a passkey\'s name is text people read', () => {
  it('attack: a name with bidirectional controls or half a surrogate pair (a name that reads differently than it is, in the journal administrators read): 400 naming it, nothing written', async () => {
    const { app, set, person, passkeyId } = await setUp();
    const before = await request(app).get('/me/passkeys').set(auth(set.access_token));
    for (const [name, code] of [['Phone\u202Eexe.gpj', 'bidi_control'], ['Key \u2066hidden', 'bidi_control'], ['Half \uD800 pair', 'lone_surrogate']] as const) {
      const renamed = await request(app).patch(`/me/passkeys/${passkeyId}`).set(auth(set.access_token)).send({ name });
      expect(renamed.status, renamed.text).toBe(400);
      expectContractResponse(renamed, 'PATCH', '/me/passkeys/{id}');
      expect(renamed.body.errors[0]).toMatchObject({ location: 'request/body/name', error_code: code });
      // Registering: refused before its challenge is taken, so the same answer with a good name still registers.
      const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
      const credential = new SoftAuthenticator().register(started.body.options);
      const refused = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name, credential });
      expect(refused.status, refused.text).toBe(400);
      expectContractResponse(refused, 'POST', '/me/passkeys');
      expect(refused.body.errors[0]).toMatchObject({ location: 'request/body/name', error_code: code });
      const retried = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Spare key', credential });
      expect(retried.status, retried.text).toBe(201);
      await request(app).delete(`/me/passkeys/${retried.body.passkey.id}`).set(auth(set.access_token)).expect(204);
    }
    const after = await request(app).get('/me/passkeys').set(auth(set.access_token));
    expect(after.body).toEqual(before.body);
    expect(await eventsOf(person.id, 'passkey_renamed')).toEqual([]);
  });

  it('a name is kept NFC and trimmed, as every name people read', async () => {
    const { app, set, passkeyId } = await setUp();
    const renamed = await request(app).patch(`/me/passkeys/${passkeyId}`).set(auth(set.access_token)).send({ name: '  Cafe\u0301 laptop ' });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe('Caf\u00e9 laptop');
  });
});

describe('removing passkeys', () => {
  it("removing another person's passkey: 404, as for an unknown one, and it stays", async () => {
    const { app, passkeyId, person } = await setUp();
    const attacker = await createUser(database.db);
    const attackerSet = await signIn(app, attacker.email, attacker.password);
    const removal = await request(app).delete(`/me/passkeys/${passkeyId}`).set(auth(attackerSet.access_token));
    expect(removal.status).toBe(404);
    expectContractResponse(removal, 'DELETE', '/me/passkeys/{id}');
    const unknown = await request(app).delete('/me/passkeys/00000000-0000-4000-8000-000000000000').set(auth(attackerSet.access_token));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ ...removal.body, request_id: unknown.body.request_id });
    const rename = await request(app).patch(`/me/passkeys/${passkeyId}`).set(auth(attackerSet.access_token)).send({ name: 'Mine now' });
    expect(rename.status).toBe(404);
    const row = await database.db.selectFrom('second_factors').select(['user_id', 'name']).where('id', '=', passkeyId).executeTakeFirstOrThrow();
    expect(row).toEqual({ user_id: person.id, name: 'Laptop' });
  });

  it('removes one; with the last factor the recovery codes go', async () => {
    const { app, set, person, passkeyId } = await setUp();
    const res = await request(app).delete(`/me/passkeys/${passkeyId}`).set(auth(set.access_token));
    expect(res.status).toBe(204);
    expect((await request(app).get('/me/passkeys').set(auth(set.access_token))).body).toEqual({ data: [] });
    expect((await request(app).get('/me/second-factors').set(auth(set.access_token))).body.recovery_codes_remaining).toBe(0);
    expect((await eventsOf(person.id, 'second_factor_removed')).map((e) => e.details)).toEqual([{ method: 'passkey', passkey_id: passkeyId, name: 'Laptop' }]);
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(201);
  });
});

describe('a passkey as the second step of a sign-in', () => {
  it('is offered after the password, and opens a session that says how', async () => {
    const { app, person, authenticator, clock, passkeyId } = await setUp();
    const { challengeToken, challenge, body } = await passwordStepWithPasskey(app, person);
    expect(body.second_factor.methods).toEqual(['passkey', 'recovery_code']);
    expect(body.second_factor.passkey_options).toMatchObject({ rpId: 'localhost', userVerification: 'required', allowCredentials: [{ id: authenticator.credentialId, type: 'public-key' }] });
    clock.advance(60_000);
    const res = await request(app).post('/sessions/second-factor').send({ challenge_token: challengeToken, passkey: authenticator.assert(challenge) });
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions/second-factor');
    const sessions = await request(app).get('/sessions').set(auth(res.body.access_token));
    expect(sessions.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('password_passkey');
    const listed = await request(app).get('/me/passkeys').set(auth(res.body.access_token));
    expect(listed.body.data[0]).toMatchObject({ id: passkeyId, last_used_at: clock.now().toISOString() });
  });

  it('replayed assertion: an answer that signed in once does not sign in again, on any challenge', async () => {
    const { app, person, authenticator } = await setUp();
    const first = await passwordStepWithPasskey(app, person);
    const answer = authenticator.assert(first.challenge);
    expect((await secondStep(app, { challenge_token: first.challengeToken, passkey: answer } as never)).status).toBe(201);
    const replayedOnSame = await request(app).post('/sessions/second-factor').send({ challenge_token: first.challengeToken, passkey: answer });
    expect([replayedOnSame.status, replayedOnSame.body.code]).toEqual([401, 'invalid_challenge']);
    const next = await passwordStepWithPasskey(app, person);
    const replayed = await request(app).post('/sessions/second-factor').send({ challenge_token: next.challengeToken, passkey: answer });
    expect([replayed.status, replayed.body.code]).toEqual([401, 'invalid_second_factor']);
    expect((await eventsOf(person.id, 'second_factor_failed')).at(-1)?.details).toMatchObject({ method: 'passkey', during: 'sign_in', reason: 'not_verified' });
  });

  it("another user's credential: a passkey of someone else does not pass anyone's second step", async () => {
    const victim = await setUp();
    const attacker = await createUser(database.db);
    const attackerSet = await signIn(victim.app, attacker.email, attacker.password);
    const attackerKey = new SoftAuthenticator();
    await registerPasskey(victim.app, attackerSet.access_token, attackerKey);
    // The attacker knows the victim's password and signs the victim's challenge with their own passkey.
    const { challengeToken, challenge } = await passwordStepWithPasskey(victim.app, victim.person);
    const res = await request(victim.app).post('/sessions/second-factor').send({ challenge_token: challengeToken, passkey: attackerKey.assert(challenge) });
    expect([res.status, res.body.code]).toEqual([401, 'invalid_second_factor']);
    expect((await eventsOf(victim.person.id, 'second_factor_failed')).at(-1)?.details).toMatchObject({ method: 'passkey', reason: 'not_this_person' });
    expect(await database.db.selectFrom('sessions').select('id').where('user_id', '=', victim.person.id).where('authentication_method', '=', 'password_passkey').execute()).toEqual([]);
  });

  it('origin mismatch: an answer made for another site (phishing) is refused', async () => {
    const { app, person, authenticator } = await setUp();
    const { challengeToken, challenge } = await passwordStepWithPasskey(app, person);
    const res = await request(app).post('/sessions/second-factor').send({ challenge_token: challengeToken, passkey: authenticator.assert(challenge, { origin: 'https://backoffice.example.net' }) });
    expect([res.status, res.body.code]).toEqual([401, 'invalid_second_factor']);
  });

  it('user verification required: an answer without it is refused', async () => {
    const { app, person, authenticator } = await setUp();
    const { challengeToken, challenge } = await passwordStepWithPasskey(app, person);
    const res = await request(app).post('/sessions/second-factor').send({ challenge_token: challengeToken, passkey: authenticator.assert(challenge, { userVerified: false }) });
    expect([res.status, res.body.code]).toEqual([401, 'invalid_second_factor']);
  });
});

describe('passwordless sign-in with a passkey', () => {
  it('signs in with a discoverable passkey alone: the seed\'s token set, a session opened by a passkey', async () => {
    const { app, authenticator, person } = await setUp();
    const started = await request(app).post('/sessions/passkey/challenge');
    expect(started.status).toBe(201);
    expectContractResponse(started, 'POST', '/sessions/passkey/challenge');
    expect(started.body.options).toMatchObject({ rpId: 'localhost', userVerification: 'required' });
    expect(started.body.options.allowCredentials ?? []).toEqual([]);
    const res = await passwordless(app, authenticator.assert(started.body.options.challenge));
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions/passkey');
    expect(Object.keys(res.body).sort()).toEqual(['access_token', 'expires_in', 'refresh_token', 'token_type']);
    const me = await request(app).get('/me').set(auth(res.body.access_token));
    expect(me.body.user.id).toBe(person.id);
    expect(me.body.session.authentication_method).toBe('passkey');
    const sessions = await request(app).get('/sessions').set(auth(res.body.access_token));
    expect(sessions.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('passkey');
    expect((await eventsOf(person.id, 'sign_in_succeeded')).length).toBeGreaterThanOrEqual(2);
  });

  it("a person of a domain whose provider requires company sign-in cannot come in by a passkey made before (sso_required bypass)", async () => {
    const { app, authenticator, person } = await setUp();
    const providerId = await makeIdentityProvider(database.db, 'https://idp.example.test', [person.email.slice(person.email.indexOf('@') + 1)]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', providerId).execute();
    try {
      const res = await passwordless(app, authenticator.assert(await startPasswordless(app)));
      expect([res.status, res.body.code]).toEqual([401, 'invalid_passkey']);
      expect((await eventsOf(person.id, 'sign_in_failed')).map((e) => (e.details as { reason?: string }).reason)).toContain('sso_required');
    } finally {
      // The fixtures' people share a domain: the other tests of this file sign in with passkeys.
      await database.db.deleteFrom('identity_providers').where('id', '=', providerId).execute();
    }
  });

  it('replayed assertion and challenge reused: each challenge signs in once', async () => {
    const { app, authenticator } = await setUp();
    const challenge = await startPasswordless(app);
    const answer = authenticator.assert(challenge);
    expect((await passwordless(app, answer)).status).toBe(201);
    const replayed = await passwordless(app, answer);
    expect([replayed.status, replayed.body.code]).toEqual([401, 'invalid_passkey']);
    expectContractResponse(replayed, 'POST', '/sessions/passkey');
    const reused = await passwordless(app, authenticator.assert(challenge));
    expect([reused.status, reused.body.code]).toEqual([401, 'invalid_passkey']);
  });

  it('counter going backwards: a copied authenticator is refused and recorded, the counter kept', async () => {
    const { app, authenticator, person, passkeyId } = await setUp({ synced: false });
    expect((await passwordless(app, authenticator.assert(await startPasswordless(app), { signCount: 7 }))).status).toBe(201);
    const clone = await passwordless(app, authenticator.assert(await startPasswordless(app), { signCount: 5 }));
    expect([clone.status, clone.body.code]).toEqual([401, 'invalid_passkey']);
    const same = await passwordless(app, authenticator.assert(await startPasswordless(app), { signCount: 7 }));
    expect(same.status).toBe(401);
    const row = await database.db.selectFrom('second_factors').select('sign_count').where('id', '=', passkeyId).executeTakeFirstOrThrow();
    expect(Number(row.sign_count)).toBe(7);
    expect((await eventsOf(person.id, 'sign_in_failed')).map((e) => e.details)).toEqual([
      { method: 'passkey', reason: 'counter_regressed' },
      { method: 'passkey', reason: 'counter_regressed' },
    ]);
    // The genuine authenticator, a step ahead, still signs in.
    expect((await passwordless(app, authenticator.assert(await startPasswordless(app), { signCount: 8 }))).status).toBe(201);
  });

  it('backup flags: kept as reported, and a passkey claiming to have become synced-able is refused', async () => {
    const { app, authenticator, passkeyId } = await setUp({ synced: true });
    expect((await passwordless(app, authenticator.assert(await startPasswordless(app), { backedUp: false }))).status).toBe(201);
    expect(await database.db.selectFrom('second_factors').select(['backup_eligible', 'backup_state']).where('id', '=', passkeyId).executeTakeFirstOrThrow()).toEqual({ backup_eligible: true, backup_state: false });
    const flipped = await passwordless(app, authenticator.assert(await startPasswordless(app), { backupEligible: false, backedUp: false }));
    expect(flipped.status).toBe(401);
    const impossible = await passwordless(app, authenticator.assert(await startPasswordless(app), { backupEligible: false, backedUp: true }));
    expect(impossible.status).toBe(401);
  });

  it('origin mismatch, a wrong user handle, an unknown passkey, garbage: the same 401, no session', async () => {
    const { app, authenticator, person } = await setUp();
    const before = await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).execute();
    const answers = [
      authenticator.assert(await startPasswordless(app), { origin: 'https://backoffice.example.net' }),
      authenticator.assert(await startPasswordless(app), { userHandle: Buffer.alloc(16, 7).toString('base64url') }),
      authenticator.assert(await startPasswordless(app), { userHandle: null }),
      new SoftAuthenticator().assert(await startPasswordless(app)),
      { id: 'x', rawId: 'x', type: 'public-key', response: { clientDataJSON: 12 } },
      { response: { clientDataJSON: Buffer.from('{"challenge":"' + 'A'.repeat(43) + '"}').toString('base64url') } },
    ];
    for (const answer of answers) {
      const res = await passwordless(app, answer);
      expect([res.status, res.body.code]).toEqual([401, 'invalid_passkey']);
    }
    expect(await database.db.selectFrom('sessions').select('id').where('user_id', '=', person.id).execute()).toEqual(before);
  });

  it('a disabled person does not sign in with their passkey', async () => {
    const { app, authenticator, person } = await setUp();
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', person.id).execute();
    const res = await passwordless(app, authenticator.assert(await startPasswordless(app)));
    expect([res.status, res.body.code]).toEqual([401, 'invalid_passkey']);
    expect((await eventsOf(person.id, 'sign_in_failed')).at(-1)?.details).toEqual({ method: 'passkey', reason: 'account_disabled' });
  });

  it('caps the challenges one address may hold, and the sweep deletes expired ones', async () => {
    const clock = new ManualClock(new Date('2026-12-20T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const from = (ip: string) => request(app).post('/sessions/passkey/challenge').set('x-forwarded-for', ip);
    for (let i = 0; i < 50; i++) expect((await from('198.51.100.77')).status).toBe(201);
    const refused = await from('198.51.100.77');
    expect(refused.status).toBe(429);
    expectContractResponse(refused, 'POST', '/sessions/passkey/challenge');
    expect((await from('198.51.100.78')).status).toBe(201);
    clock.advance(301_000);
    expect((await from('198.51.100.77')).status).toBe(201);
    const swept = await sweep(database.db, clock.now(), { throttleWindowS: 900, sessionIdleTimeoutS: 3600, sessionRetentionS: 86_400 });
    expect(swept.signInChallenges).toBeGreaterThanOrEqual(51);
  });

  it('attack: parallel begins from one address overrun its budget of live challenges: at most the budget is kept', async () => {
    const clock = new ManualClock(new Date('2026-12-21T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock, env: { TRUST_PROXY: 'loopback' } });
    const address = '198.51.100.90';
    const from = () => request(app).post('/sessions/passkey/challenge').set('x-forwarded-for', address);
    for (let i = 0; i < MAX_LIVE_CHALLENGES_PER_ADDRESS - 1; i++) expect((await from()).status).toBe(201);
    // One place left. The test holds back every insert into the challenges (SHARE blocks inserts,
    // not reads) until all the parallel begins are under way, so that each has counted if it counts
    // before it inserts: they race for the last place with certainty, not by chance.
    const parallel = 5;
    const holder = new pg.Client({ connectionString: database.url });
    await holder.connect();
    let answers: request.Response[];
    try {
      await holder.query('begin');
      await holder.query('lock table passkey_challenges in share mode');
      const sent = Promise.all(Array.from({ length: parallel }, () => from().then((res) => res)));
      for (;;) {
        const { rows } = await database.pool.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
        if (Number(rows[0]!.n) >= parallel) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await holder.query('commit');
      answers = await sent;
    } finally {
      await holder.end();
    }
    expect(answers.map((res) => res.status).sort()).toEqual([201, ...Array<number>(parallel - 1).fill(429)]);
    const { n } = await database.db
      .selectFrom('passkey_challenges')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('expires_at', '>', clock.now())
      .where('purpose', '<>', 'step_up')
      .where('counted_address', '=', address)
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(MAX_LIVE_CHALLENGES_PER_ADDRESS);
  });
});

describe('the administrators\' policy', () => {
  it('counts a passkey as a second factor', async () => {
    const { app } = createTestApp(database.db, { env: { ADMIN_SECOND_FACTOR: undefined } });
    const admin = await createUser(database.db);
    await database.db.insertInto('user_roles').values({ user_id: admin.id, role_id: await adminRoleId(database.db) }).execute();
    const set = await signIn(app, admin.email, admin.password);
    expect((await request(app).get('/users').set(auth(set.access_token))).body.code).toBe('second_factor_required');
    await registerPasskey(app, set.access_token, new SoftAuthenticator());
    expect((await request(app).get('/users').set(auth(set.access_token))).status).toBe(200);
    expect((await request(app).get('/me/second-factors').set(auth(set.access_token))).body).toMatchObject({ required: true, recovery_codes_remaining: 10 });
  });
});
