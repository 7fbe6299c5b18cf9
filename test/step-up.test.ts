// Step-up (docs/AUTH.md, "Step-up"), as a thief holding a victim's access token tries it: the
// sensitive changes are refused with 403 step_up_required until the session presents a fresh proof
// (a code of the person's second factor, or the password of a person without one), and the proof
// lasts STEP_UP_TTL_S. On the real service and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, spec, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, signInWithTotp, stepUp, totpCode } from './support/second-factor.js';
import { adminRoleId, makeApiKey, makeIdentityProvider } from './support/access-fixtures.js';
import { ManualClock } from '../src/clock.js';
import { STEP_UP_TTL_S } from '../src/auth/sessions/step-up.js';
import { indexOperations } from '../src/contract/spec.js';
import { budget } from './support/budgets.js';
import { authenticate } from '../src/http/authenticate.js';
import { STEP_UP_REFUSALS_PER_SESSION } from '../src/auth/sessions/step-up-refusals.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.destroy());

const START = new Date('2026-12-18T10:00:00.000Z');
/** Each test signs in (and steps up by password) a few times: argon2 verifications, slow on a busy machine. */
const HASHES = { timeout: budget({ passwordHash: 8 }) };
const auth = (token: string) => ({ authorization: `Bearer ${token}` });
const count = async (table: 'second_factors' | 'recovery_codes' | 'api_keys', column: 'user_id' | 'created_by', id: string) =>
  (await database.db.selectFrom(table).select(column).where(column, '=', id).execute()).length;

/** A victim (an administrator, so that creating API keys is within their rights) signed in on a session. */
async function victim(options: { withTotp: boolean; email?: string }) {
  const clock = new ManualClock(START);
  const { app } = createTestApp(database.db, { clock });
  const person = await createUser(database.db, options.email === undefined ? {} : { email: options.email });
  await database.db.insertInto('user_roles').values({ user_id: person.id, role_id: await adminRoleId(database.db) }).execute();
  if (!options.withTotp) return { app, clock, person, token: (await signIn(app, person.email, person.password)).access_token, secret: '', recoveryCodes: [] as string[] };
  const first = await signIn(app, person.email, person.password);
  const { secret, recoveryCodes } = await enrolTotp(app, first.access_token, clock, person.password);
  clock.advance(30_000);
  // The session the thief takes: signed in with the password and a code, minutes ago.
  const { access_token } = await signInWithTotp(app, person, secret, clock);
  clock.advance(60_000);
  return { app, clock, person, token: access_token, secret, recoveryCodes };
}

/** Refused as the contract says, naming what the victim could prove it with. */
function expectStepUpRequired(res: request.Response, method: string, path: string, methods: string[]) {
  expect(res.status).toBe(403);
  expect(res.body.code).toBe('step_up_required');
  expect(res.body.step_up_methods).toEqual(methods);
  expectContractResponse(res, method, path);
}

/** The owner (or the thief, once they hold a code) steps up with the code of the moment. */
async function stepUpWithCode(v: Awaited<ReturnType<typeof victim>>) {
  v.clock.advance(30_000); // the sign-in's code is used up
  const res = await stepUp(v.app, v.token, { totp_code: totpCode(v.secret, v.clock.now()) });
  expect(res.status).toBe(200);
  expectContractResponse(res, 'POST', '/sessions/current/step-up');
  expect(res.body).toEqual({ method: 'totp', valid_until: new Date(v.clock.now().getTime() + STEP_UP_TTL_S * 1000).toISOString() });
}

describe('a stolen access token alone makes no sensitive change', HASHES, () => {
  it("stolen access token removes the victim's authenticator: refused before a fresh proof, allowed after", async () => {
    const v = await victim({ withTotp: true });
    expectStepUpRequired(await request(v.app).delete('/me/totp').set(auth(v.token)), 'DELETE', '/me/totp', ['totp', 'recovery_code']);
    expect(await count('second_factors', 'user_id', v.person.id)).toBe(1);
    // The password, which a thief may know as well, is no proof for a person with a second factor.
    const withPassword = await stepUp(v.app, v.token, { password: v.person.password });
    expect(withPassword.status).toBe(400);
    expect(withPassword.body).toMatchObject({ code: 'step_up_needs_second_factor', step_up_methods: ['totp', 'recovery_code'] });
    expectContractResponse(withPassword, 'POST', '/sessions/current/step-up');
    expectStepUpRequired(await request(v.app).delete('/me/totp').set(auth(v.token)), 'DELETE', '/me/totp', ['totp', 'recovery_code']);
    // A wrong code is no proof either.
    const wrong = await stepUp(v.app, v.token, { totp_code: totpCode(v.secret, new Date(v.clock.now().getTime() + 3_600_000)) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_second_factor');
    expect(await count('second_factors', 'user_id', v.person.id)).toBe(1);

    await stepUpWithCode(v);
    expect((await request(v.app).delete('/me/totp').set(auth(v.token))).status).toBe(204);
    expect(await count('second_factors', 'user_id', v.person.id)).toBe(0);
  });

  it("stolen access token enrols the thief's authenticator: refused before a fresh proof, allowed after", async () => {
    // A victim without a second factor: the thief's app would lock the victim out.
    const bare = await victim({ withTotp: false });
    expectStepUpRequired(await request(bare.app).post('/me/totp').set(auth(bare.token)), 'POST', '/me/totp', ['password']);
    expect(await count('second_factors', 'user_id', bare.person.id)).toBe(0);
    const wrong = await stepUp(bare.app, bare.token, { password: 'not the password at all' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.code).toBe('invalid_current_password');
    expectStepUpRequired(await request(bare.app).post('/me/totp').set(auth(bare.token)), 'POST', '/me/totp', ['password']);
    const proof = await stepUp(bare.app, bare.token, { password: bare.person.password });
    expect(proof.status).toBe(200);
    expect(proof.body.method).toBe('password');
    expect((await request(bare.app).post('/me/totp').set(auth(bare.token))).status).toBe(201);

    // A victim with one: replacing it starts with an enrolment the token alone cannot make.
    const v = await victim({ withTotp: true });
    expectStepUpRequired(await request(v.app).post('/me/totp').set(auth(v.token)), 'POST', '/me/totp', ['totp', 'recovery_code']);
    await stepUpWithCode(v);
    expect((await request(v.app).post('/me/totp').set(auth(v.token))).body.code).toBe('totp_already_enrolled');
  });

  it('stolen access token regenerates recovery codes: refused before a fresh proof, allowed after', async () => {
    const v = await victim({ withTotp: true });
    expectStepUpRequired(await request(v.app).post('/me/recovery-codes').set(auth(v.token)), 'POST', '/me/recovery-codes', ['totp', 'recovery_code']);
    // The victim's codes still work: nothing was replaced.
    const proof = await stepUp(v.app, v.token, { recovery_code: v.recoveryCodes[0]! });
    expect(proof.status).toBe(200);
    expect(proof.body.method).toBe('recovery_code');
    const fresh = await request(v.app).post('/me/recovery-codes').set(auth(v.token));
    expect(fresh.status).toBe(201);
    expect(fresh.body.recovery_codes).toHaveLength(10);
  });

  it('stolen access token changes the password: refused before a fresh proof, allowed after', async () => {
    const v = await victim({ withTotp: true });
    // The thief knows the password (step-up's attacker may: docs/AUTH.md): still refused.
    const change = () => request(v.app).put('/me/password').set(auth(v.token)).send({ current_password: v.person.password, new_password: 'the thief would like this one' });
    expectStepUpRequired(await change(), 'PUT', '/me/password', ['totp', 'recovery_code']);
    expect((await signInWithTotpAfter(v)).status).toBe(202); // the old password still opens the first step
    await stepUpWithCode(v);
    expect((await change()).status).toBe(204);
  });

  it('stolen access token creates an API key: refused before a fresh proof, allowed after', async () => {
    const body = { name: `thief ${Math.random()}`, permissions: ['users.list'] };
    for (const withTotp of [true, false]) {
      const v = await victim({ withTotp });
      const methods = withTotp ? ['totp', 'recovery_code'] : ['password'];
      expectStepUpRequired(await request(v.app).post('/api-keys').set(auth(v.token)).send(body), 'POST', '/api-keys', methods);
      expect(await count('api_keys', 'created_by', v.person.id)).toBe(0);
      if (withTotp) await stepUpWithCode(v);
      else expect((await stepUp(v.app, v.token, { password: v.person.password })).status).toBe(200);
      const made = await request(v.app).post('/api-keys').set(auth(v.token)).send({ ...body, name: `${body.name} ${withTotp}` });
      expect(made.status).toBe(201);
      // Rotating hands out a secret as well.
      v.clock.advance((STEP_UP_TTL_S + 1) * 1000);
      const rotated = await request(v.app).post(`/api-keys/${made.body.api_key.id}/rotate`).set(auth(v.token)).send({});
      expectStepUpRequired(rotated, 'POST', '/api-keys/{id}/rotate', methods);
    }
  });
});

describe('security: what a stolen access token makes must not outlive the session', HASHES, () => {
  it('attack: a copy of an administrator\'s access token creates an administrator account with a password the thief chose', async () => {
    const v = await victim({ withTotp: true });
    const body = { email: `backdoor-${Date.now()}@thief.example`, first_name: 'Back', last_name: 'Door', roles: ['admin'], password: 'a password only the thief knows' };
    expectStepUpRequired(await request(v.app).post('/users').set(auth(v.token)).send(body), 'POST', '/users', ['totp', 'recovery_code']);
    expect(await database.db.selectFrom('users').select('id').where('email', '=', body.email).execute()).toEqual([]);
    // An API key has no session to outlive: it creates within what it was given, without a proof.
    const key = await makeApiKey(database.db, ['users.create']);
    const keyed = await request(v.app).post('/users').set('x-api-key', key.secret).send({ email: `made-by-key-${Date.now()}@example.com`, first_name: 'Made', last_name: 'ByKey' });
    expect(keyed.status, keyed.text).toBe(201);
  });

  it('attack: a copy of an administrator\'s access token points events at the thief\'s server (a new endpoint, a changed URL, a rotated secret)', async () => {
    const v = await victim({ withTotp: true });
    const { app } = createTestApp(database.db, { clock: v.clock, env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' } });
    const created = await request(app).post('/webhook-endpoints').set(auth(v.token)).send({ url: 'https://127.0.0.1:9/thief', event_types: ['user.created'] });
    expectStepUpRequired(created, 'POST', '/webhook-endpoints', ['totp', 'recovery_code']);
    expect(await database.db.selectFrom('webhook_endpoints').select('id').where('url', '=', 'https://127.0.0.1:9/thief').execute()).toEqual([]);
    // The owner's own endpoint, made with a proof; the thief's token then tries to redirect it or take its secret.
    await stepUpWithCode(v);
    const own = await request(app).post('/webhook-endpoints').set(auth(v.token)).send({ url: 'https://127.0.0.1:9/owner', event_types: ['user.created'] });
    expect(own.status, own.text).toBe(201);
    v.clock.advance((STEP_UP_TTL_S + 1) * 1000);
    const id = own.body.webhook_endpoint.id as string;
    expectStepUpRequired(await request(app).patch(`/webhook-endpoints/${id}`).set(auth(v.token)).send({ url: 'https://127.0.0.1:9/thief' }), 'PATCH', '/webhook-endpoints/{id}', ['totp', 'recovery_code']);
    expectStepUpRequired(await request(app).post(`/webhook-endpoints/${id}/rotate`).set(auth(v.token)).send({}), 'POST', '/webhook-endpoints/{id}/rotate', ['totp', 'recovery_code']);
    expect(await database.db.selectFrom('webhook_endpoints').select('url').where('id', '=', id).executeTakeFirstOrThrow()).toEqual({ url: 'https://127.0.0.1:9/owner' });
  });

  it('attack: a copy of an administrator\'s access token prolongs an API key the thief holds a copy of', async () => {
    const v = await victim({ withTotp: true });
    await stepUpWithCode(v);
    const made = await request(v.app).post('/api-keys').set(auth(v.token)).send({ name: `short-lived ${Math.random()}`, permissions: ['users.list'], expires_at: new Date(v.clock.now().getTime() + 86_400_000).toISOString() });
    expect(made.status, made.text).toBe(201);
    v.clock.advance((STEP_UP_TTL_S + 1) * 1000);
    const id = made.body.api_key.id as string;
    expectStepUpRequired(await request(v.app).patch(`/api-keys/${id}`).set(auth(v.token)).send({ expires_at: null, allowed_ips: null }), 'PATCH', '/api-keys/{id}', ['totp', 'recovery_code']);
    const key = await database.db.selectFrom('api_keys').select('expires_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(key.expires_at).not.toBeNull();
  });
});

describe('security: a password the company retired (sso_required) proves nothing', HASHES, () => {
  it("attack: a copy of an administrator's access token and their old password (their domain now signs in at the provider only) make a fresh proof, by step-up or by changing the password", async () => {
    const domain = `retired-${Date.now()}.example`;
    const v = await victim({ withTotp: false, email: `boss@${domain}` });
    // The company turns company sign-in on: the password may no longer sign in, nor be reset.
    const provider = await makeIdentityProvider(database.db, 'https://idp.retired.example', [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    expect((await request(v.app).post('/sessions').send({ session: { email: v.person.email, password: v.person.password } })).body.code).toBe('sso_required');

    const key = () => request(v.app).post('/api-keys').set(auth(v.token)).send({ name: `retired ${Math.random()}`, permissions: ['users.list'] });
    const refused = await key();
    expect(refused.body.code).toBe('step_up_required');
    const proof = await stepUp(v.app, v.token, { password: v.person.password });
    expect(proof.status).toBe(403);
    expect(proof.body.code).toBe('sso_required');
    expectContractResponse(proof, 'POST', '/sessions/current/step-up');
    expect((await key()).status).toBe(403);
    expect(await count('api_keys', 'created_by', v.person.id)).toBe(0);
    const session = await database.db.selectFrom('sessions').select(['stepped_up_at']).where('user_id', '=', v.person.id).execute();
    expect(session.every((s) => s.stepped_up_at === null)).toBe(true);
  });

  it("attack: a copy of an administrator's access token and their retired password change the password (the owner's other sessions ended, a password the thief knows set), and the refusal offers the password", async () => {
    const domain = `retired-pw-${Date.now()}.example`;
    const v = await victim({ withTotp: false, email: `boss@${domain}` });
    const owner = await signIn(v.app, v.person.email, v.person.password);
    const provider = await makeIdentityProvider(database.db, 'https://idp.retired-pw.example', [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    const before = (await database.db.selectFrom('users').select('password_hash').where('id', '=', v.person.id).executeTakeFirstOrThrow()).password_hash;

    const changed = await request(v.app).put('/me/password').set(auth(v.token)).send({ current_password: v.person.password, new_password: 'the thief chose this sentence' });
    // No link to the provider yet, no factor: nothing this person can present here.
    expectStepUpRequired(changed, 'PUT', '/me/password', []);
    expect((await database.db.selectFrom('users').select('password_hash').where('id', '=', v.person.id).executeTakeFirstOrThrow()).password_hash).toBe(before);
    expect((await request(v.app).get('/me').set(auth(owner.access_token))).status).toBe(200);
    // Every other sensitive change offers no password either.
    expectStepUpRequired(await request(v.app).post('/me/totp').set(auth(v.token)), 'POST', '/me/totp', []);
  });

  it('a person who must first replace a password someone else set still replaces it with that password (every other operation, the step-up included, waits for it)', async () => {
    const domain = `retired-given-${Date.now()}.example`;
    const v = await victim({ withTotp: false, email: `new@${domain}` });
    await database.db.updateTable('users').set({ must_change_password: true }).where('id', '=', v.person.id).execute();
    const provider = await makeIdentityProvider(database.db, 'https://idp.retired-given.example', [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    expect((await request(v.app).post('/sessions/current/step-up/oidc').set(auth(v.token))).body.code).toBe('password_change_required');
    const changed = await request(v.app).put('/me/password').set(auth(v.token)).send({ current_password: v.person.password, new_password: 'my own long private sentence' });
    expect(changed.status).toBe(204);
    // Still no proof made by it.
    expectStepUpRequired(await request(v.app).post('/me/totp').set(auth(v.token)), 'POST', '/me/totp', []);
  });
});

/** The password step of a sign-in (a person with a second factor answers 202). */
function signInWithTotpAfter(v: { app: Parameters<typeof request>[0]; person: { email: string; password: string } }) {
  return request(v.app).post('/sessions').send({ session: { email: v.person.email, password: v.person.password } });
}

describe('the proof', HASHES, () => {
  it(`expires after ${STEP_UP_TTL_S} seconds`, async () => {
    const v = await victim({ withTotp: true });
    await stepUpWithCode(v);
    v.clock.advance((STEP_UP_TTL_S - 1) * 1000);
    expect((await request(v.app).post('/me/recovery-codes').set(auth(v.token))).status).toBe(201);
    v.clock.advance(2_000);
    expectStepUpRequired(await request(v.app).post('/me/recovery-codes').set(auth(v.token)), 'POST', '/me/recovery-codes', ['totp', 'recovery_code']);
  });

  it('is made by no sign-in: a token taken right after the second factor is not enough', async () => {
    const v = await victim({ withTotp: true });
    const { access_token } = await signInWithTotp(v.app, v.person, v.secret, v.clock);
    expectStepUpRequired(await request(v.app).delete('/me/totp').set(auth(access_token)), 'DELETE', '/me/totp', ['totp', 'recovery_code']);
  });

  it("belongs to its session: another session of the same person does not share it", async () => {
    const v = await victim({ withTotp: true });
    v.clock.advance(30_000);
    const other = await signInWithTotp(v.app, v.person, v.secret, v.clock);
    await stepUpWithCode(v);
    expectStepUpRequired(await request(v.app).post('/me/recovery-codes').set(auth(other.access_token)), 'POST', '/me/recovery-codes', ['totp', 'recovery_code']);
  });

  it('by password stops counting once a second factor is enrolled', async () => {
    const v = await victim({ withTotp: false });
    const { secret } = await enrolTotp(v.app, v.token, v.clock, v.person.password);
    // The password proof that allowed the enrolment is not a second-factor proof.
    expectStepUpRequired(await request(v.app).post('/me/recovery-codes').set(auth(v.token)), 'POST', '/me/recovery-codes', ['totp', 'recovery_code']);
    v.clock.advance(30_000);
    expect((await stepUp(v.app, v.token, { totp_code: totpCode(secret, v.clock.now()) })).status).toBe(200);
    expect((await request(v.app).post('/me/recovery-codes').set(auth(v.token))).status).toBe(201);
  });

  it('a person without a second factor changes the password with the current one, which counts as a proof', async () => {
    const v = await victim({ withTotp: false });
    const changed = await request(v.app).put('/me/password').set(auth(v.token)).send({ current_password: v.person.password, new_password: 'another long private sentence' });
    expect(changed.status).toBe(204);
    expect((await request(v.app).post('/me/totp').set(auth(v.token))).status).toBe(201);
  });

  it("wrong codes count against the session's budget of refusals (not the address's), are recorded, and a success is recorded without a secret", async () => {
    const clock = new ManualClock(START);
    // The address's limits as low as they go: a wrong code is not counted there.
    const { app } = createTestApp(database.db, { clock, env: { SIGN_IN_MAX_FAILURES_PER_EMAIL_AND_IP: '3' } });
    const person = await createUser(database.db);
    const first = await signIn(app, person.email, person.password);
    const { secret } = await enrolTotp(app, first.access_token, clock, person.password);
    for (let i = 1; i <= STEP_UP_REFUSALS_PER_SESSION; i++) {
      expect((await stepUp(app, first.access_token, { recovery_code: `wrong-${i}` })).status).toBe(400);
    }
    clock.advance(30_000);
    const blocked = await stepUp(app, first.access_token, { totp_code: totpCode(secret, clock.now()) });
    expect(blocked.status).toBe(429);
    expectContractResponse(blocked, 'POST', '/sessions/current/step-up');
    const events = await database.db.selectFrom('security_events').select(['type', 'details', 'actor_type']).where('user_id', '=', person.id).where('type', 'in', ['second_factor_failed', 'session_stepped_up']).orderBy('id').execute();
    expect(events.filter((e) => e.type === 'second_factor_failed').map((e) => e.details)).toEqual(Array.from({ length: STEP_UP_REFUSALS_PER_SESSION }, () => ({ method: 'recovery_code', during: 'step_up' })));
    // The enrolment's password proof was recorded, with its method only.
    expect(events.filter((e) => e.type === 'session_stepped_up').map((e) => e.details)).toEqual([{ method: 'password' }]);
    expect(JSON.stringify(events)).not.toContain(person.password);
  });

  it('a malformed step-up changes nothing: 400 for no proof, two proofs, or a proof of the wrong shape', async () => {
    const v = await victim({ withTotp: true });
    const proofs = () => database.db.selectFrom('sessions').select(['id', 'stepped_up_at']).where('user_id', '=', v.person.id).where('stepped_up_at', 'is not', null).execute();
    const before = await proofs(); // the enrolment's session stepped up with the password
    for (const body of [{}, { totp_code: '12345' }, { totp_code: totpCode(v.secret, v.clock.now()), password: 'x' }, { passkey: {} }]) {
      const res = await request(v.app).post('/sessions/current/step-up').set(auth(v.token)).send(body);
      expect(res.status).toBe(400);
      expectContractResponse(res, 'POST', '/sessions/current/step-up');
    }
    expect(await proofs()).toEqual(before);
  });
});

describe('API keys', () => {
  it('no operation that needs a step-up of everyone accepts an API key (a key has no session to prove anything with)', () => {
    const flagged = indexOperations(spec).filter((op) => op.raw['x-step-up'] === 'always' || op.raw['x-step-up'] === 'with_second_factor');
    // Not vacuous: the contract's sensitive changes are among them (the property below holds for every one, a new one included).
    expect(flagged.map((op) => op.operationId)).toEqual(expect.arrayContaining(['changePassword', 'createApiKey', 'eraseUser', 'effacerUtilisateur', 'removeTotp']));
    for (const op of flagged) expect(op.security).toEqual(['bearerAuth']);
  });

  it('the operations whose result outlives the session ask a person for a proof and a key for none (x-step-up: for_people)', () => {
    const flagged = indexOperations(spec).filter((op) => op.raw['x-step-up'] === 'for_people');
    const canonical = flagged.filter((op) => !op.path.startsWith('/utilisateurs') && !op.path.startsWith('/points-de-terminaison'));
    expect(canonical.map((op) => op.operationId)).toEqual(expect.arrayContaining(['createInvitation', 'createUser', 'createWebhookEndpoint', 'exportUserData']));
    for (const op of flagged) expect(op.security).toEqual(['apiKey', 'bearerAuth']);
  });

  it('the router refuses to start with an operation that needs a step-up and accepts keys', () => {
    const op = indexOperations(spec).find((o) => o.operationId === 'listUsers')!;
    const unused = { apiKey: async () => Promise.reject(new Error('unused')), bearer: async () => Promise.reject(new Error('unused')), stepUp: async () => {} };
    expect(() => authenticate({ ...op, raw: { ...op.raw, 'x-step-up': 'always' } }, unused)).toThrow(/signed-in people only/);
  });
});
