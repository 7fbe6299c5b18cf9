// Step-up at the identity provider (docs/IDENTITY.md, "Step-up at the provider"): a person who
// signs in only through their company's provider (no password, no second factor here) proves it
// is still them by logging in there again (prompt=login, max_age=0), checked by the ID token's
// auth_time and subject. Against the real `oidc-provider` on loopback, and the attacks: another
// subject's login does not step this session up; an ID token with an old (or no) auth_time, from
// a provider that reused its session (forged by the hand-made provider), does not either.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { budget } from './support/budgets.js';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { addProvider, startHandMadeProvider, startSignIn, type HandMadeProvider } from './support/oidc.js';
import { signInAt, startRealProvider, type RealProvider } from './support/oidc-provider.js';
import { proofIsFresh } from '../src/auth/sessions/step-up.js';

const REDIRECT_URI = 'http://localhost:3000/sign-in/oidc';
let database: TestDatabase;
let op: RealProvider;
let forger: HandMadeProvider;
let service: ReturnType<typeof createTestApp>;
let realId: string;
let forgerId: string;
let adminToken: string;

beforeAll(async () => {
  database = await createTestDatabase();
  op = await startRealProvider(REDIRECT_URI);
  forger = await startHandMadeProvider();
  service = createTestApp(database.db);
  const admin = await createUser(database.db, { roles: ['admin'] });
  const token = (adminToken = (await signIn(service.app, admin.email, admin.password)).access_token);
  // Configuring identity providers needs a fresh proof (x-step-up).
  await steppedUpInDatabase(database.db, admin.id);
  const common = { client_id: op.clientId, client_secret: op.clientSecret, create_unknown_people: true };
  realId = await addProvider(service.app, token, { ...common, name: 'Keycloak of Corp', issuer: op.issuer, domains: ['corp.example'] });
  forgerId = await addProvider(service.app, token, { name: 'Lax', issuer: forger.issuer, client_id: forger.clientId, client_secret: forger.clientSecret, domains: ['lax.example'], create_unknown_people: true });
}, budget({ passwordHash: 3 }));
afterAll(async () => {
  await op?.close();
  await forger?.close();
  await database?.destroy();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const params = (back: URL) => ({ code: back.searchParams.get('code')!, state: back.searchParams.get('state')!, iss: back.searchParams.get('iss') ?? undefined });

/** A person signed in through the real provider as `login` (created at this first sign-in): their access token. */
async function signedInAtProvider(login: string, email: string): Promise<string> {
  op.accounts.set(login, { email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace' });
  const started = await startSignIn(service.app, { provider_id: realId });
  const back = await signInAt(started.authorization_url, REDIRECT_URI, login);
  const res = await request(service.app).post('/sessions/oidc/callback').send({ ...params(back), flow_token: started.flow_token });
  expect(res.status, res.text).toBe(201);
  return res.body.access_token as string;
}

/** A sensitive change (x-step-up: always): enrolling an authenticator app. */
const sensitive = (token: string) => request(service.app).post('/me/totp').set(bearer(token));

async function startStepUp(token: string) {
  const res = await request(service.app).post('/sessions/current/step-up/oidc').set(bearer(token));
  expectContractResponse(res, 'post', '/sessions/current/step-up/oidc');
  expect(res.status, res.text).toBe(201);
  return res.body as { authorization_url: string; flow_token: string };
}

const complete = (token: string, body: Record<string, unknown>) => request(service.app).post('/sessions/current/step-up/oidc/callback').set(bearer(token)).send(body);

describe('step-up at the identity provider', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('a person who signs in only through the provider is offered it, logs in there again (prompt=login, max_age=0), and may then make a sensitive change', async () => {
    const token = await signedInAtProvider('ada-1', 'ada@corp.example');
    const refused = await sensitive(token);
    expect(refused.status, refused.text).toBe(403);
    expect(refused.body).toMatchObject({ code: 'step_up_required', step_up_methods: ['oidc'] });

    const started = await startStepUp(token);
    const asked = new URL(started.authorization_url).searchParams;
    expect(asked.get('prompt')).toBe('login');
    expect(asked.get('max_age')).toBe('0');
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'ada-1');
    const proved = await complete(token, { ...params(back), flow_token: started.flow_token });
    expectContractResponse(proved, 'post', '/sessions/current/step-up/oidc/callback');
    expect(proved.status, proved.text).toBe(200);
    expect(proved.body.method).toBe('oidc');
    expect((await sensitive(token)).status).toBe(201);
  });

  it("attack: another subject's login at the provider does not step this session up", async () => {
    const token = await signedInAtProvider('grace-1', 'grace@corp.example');
    // Mallory, who holds Grace's stolen token, starts the step-up and logs in at the provider as herself.
    op.accounts.set('mallory-1', { email: 'mallory@corp.example', email_verified: true });
    const started = await startStepUp(token);
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'mallory-1');
    const res = await complete(token, { ...params(back), flow_token: started.flow_token });
    expectContractResponse(res, 'post', '/sessions/current/step-up/oidc/callback');
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe('oidc_step_up_other_subject');
    expect((await sensitive(token)).status).toBe(403);
    const failed = await database.db.selectFrom('security_events').select('details').where('type', '=', 'sign_in_failed').orderBy('id', 'desc').executeTakeFirstOrThrow();
    expect(failed.details).toMatchObject({ method: 'oidc', during: 'step_up', reason: 'oidc_step_up_other_subject' });
  });

  it('attack: an ID token with an old auth_time (a provider that reused its session), or none, does not step up', async () => {
    // Signed in through the lax provider (hand-made: it answers whatever auth_time it is told).
    const started = await startSignIn(service.app, { provider_id: forgerId });
    const claims = { sub: 'lax-ada', email: 'ada@lax.example', email_verified: true };
    const signedIn = await request(service.app).post('/sessions/oidc/callback').send({ ...forger.authorize(started.authorization_url, claims), flow_token: started.flow_token });
    expect(signedIn.status, signedIn.text).toBe(201);
    const token = signedIn.body.access_token as string;
    const now = Math.floor(service.clock.now().getTime() / 1000);

    for (const [authTime, why] of [
      [now - 3600, 'an hour ago'],
      [now - 121, 'just over the 120 s allowed'],
      [undefined, 'no auth_time at all'],
    ] as const) {
      const step = await startStepUp(token);
      const back = forger.authorize(step.authorization_url, { ...claims, ...(authTime === undefined ? {} : { auth_time: authTime }) });
      const res = await complete(token, { ...back, flow_token: step.flow_token });
      expect(res.status, `${why}: ${res.text}`).toBe(400);
      expect(res.body.code).toBe('oidc_step_up_stale');
    }
    expect((await sensitive(token)).status).toBe(403);

    // Fresh, it counts (the forger stands for an honest provider here).
    const step = await startStepUp(token);
    const res = await complete(token, { ...forger.authorize(step.authorization_url, { ...claims, auth_time: now - 5 }), flow_token: step.flow_token });
    expect(res.status, res.text).toBe(200);
  });

  it("attack: a step-up's flow is its session's: another session's, and the sign-in callback, refuse it", async () => {
    const first = await signedInAtProvider('alan-1', 'alan@corp.example');
    const second = await signedInAtProvider('alan-1', 'alan@corp.example');
    const started = await startStepUp(first);
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'alan-1');
    const other = await complete(second, { ...params(back), flow_token: started.flow_token });
    expect(other.status).toBe(400);
    expect(other.body.code).toBe('oidc_state_invalid');

    const again = await startStepUp(first);
    const back2 = await signInAt(again.authorization_url, REDIRECT_URI, 'alan-1');
    const asSignIn = await request(service.app).post('/sessions/oidc/callback').send({ ...params(back2), flow_token: again.flow_token });
    expect(asSignIn.status).toBe(401);
    expect(asSignIn.body.code).toBe('oidc_state_invalid');
  });

  it("office NAT stranger: unauthenticated sign-in starts filling the office address's budget of flows block nobody's step-up at the provider", async () => {
    const token = await signedInAtProvider('ada-nat', 'ada-nat@corp.example');
    // The stranger, with no account, behind the office's address: sign-ins started and never finished, until the address is refused.
    for (let i = 0; i < testConfig().oidc.maxFlowsPerIp; i++) expect((await request(service.app).post('/sessions/oidc').send({ provider_id: realId })).status).toBe(201);
    expect((await request(service.app).post('/sessions/oidc').send({ provider_id: realId })).status).toBe(429);
    // The person behind the same address still steps up at the provider: start and callback.
    const started = await startStepUp(token);
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'ada-nat');
    const proved = await complete(token, { ...params(back), flow_token: started.flow_token });
    expect(proved.status, proved.text).toBe(200);
    expect(proved.body.method).toBe('oidc');
    // The address's flows go: the tests after this one share it.
    await database.db.deleteFrom('sign_in_failures').execute();
  });

  it('a person linked to no provider is 404 identity_provider_not_found', async () => {
    const person = await createUser(database.db);
    const token = (await signIn(service.app, person.email, person.password)).access_token;
    const res = await request(service.app).post('/sessions/current/step-up/oidc').set(bearer(token));
    expectContractResponse(res, 'post', '/sessions/current/step-up/oidc');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('identity_provider_not_found');
  });

  it('a login at the provider is no proof for a person with a second factor here (as the password is not)', () => {
    const now = new Date();
    expect(proofIsFresh({ at: now, method: 'oidc' }, false, now)).toBe(true);
    expect(proofIsFresh({ at: now, method: 'oidc' }, true, now)).toBe(false);
  });
});

/** A hand-made provider of its own for `domain`, and a person signed in through it (created at that first sign-in). */
async function personOfOwnProvider(prefix: string) {
  const own = await startHandMadeProvider();
  const domain = `${prefix}-${Date.now()}.example`;
  const id = await addProvider(service.app, adminToken, { name: `${prefix} ${domain}`, issuer: own.issuer, client_id: own.clientId, client_secret: own.clientSecret, domains: [domain], create_unknown_people: true });
  const claims = { sub: `${prefix}-1`, email: `ada@${domain}`, email_verified: true };
  const started = await startSignIn(service.app, { provider_id: id });
  const res = await request(service.app).post('/sessions/oidc/callback').send({ ...own.authorize(started.authorization_url, claims), flow_token: started.flow_token });
  expect(res.status, res.text).toBe(201);
  const token = res.body.access_token as string;
  const session = await database.db.selectFrom('sessions').select(['id', 'user_id']).where('user_id', '=', (eb) => eb.selectFrom('users').select('id').where('email', '=', claims.email)).executeTakeFirstOrThrow();
  return { own, id, domain, claims, token, sessionId: session.id, userId: session.user_id };
}

/** The session's refused step-ups counted (its budget) and the last `sign_in_failed` of the person. */
async function refusalsOf(sessionId: string, userId: string) {
  const counted = await database.db.selectFrom('step_up_refusals').select('id').where('session_id', '=', sessionId).where('throttled', '=', false).execute();
  const failed = await database.db.selectFrom('security_events').select('details').where('type', '=', 'sign_in_failed').where('user_id', '=', userId).orderBy('id', 'desc').execute();
  return { counted: counted.length, failed: failed.map((e) => e.details) };
}

/** What another process sees (or this one once its 10-minute discovery cache has expired): no kept discovery for the provider. */
const forgetKeptDiscovery = (id: string) => database.db.updateTable('identity_providers').set({ updated_at: new Date(Date.now() + 1000) }).where('id', '=', id).execute();

describe('step-up at the provider when the provider cannot be asked at the callback: 400 oidc_provider_error, never a 500', { timeout: budget({ passwordHash: 2 }) }, () => {
  it("failure: the provider down at the callback, its discovery read again (another process, or past the 10-minute cache): refused, recorded, counted against the session's budget, logged without a secret", async () => {
    const { own, id, claims, token, sessionId, userId } = await personOfOwnProvider('stepdown');
    const started = await startStepUp(token);
    const back = own.authorize(started.authorization_url, { ...claims, auth_time: Math.floor(Date.now() / 1000) });
    await own.close();
    await forgetKeptDiscovery(id);
    const logged = service.logs.records().length;
    const res = await complete(token, { ...back, flow_token: started.flow_token });
    expectContractResponse(res, 'post', '/sessions/current/step-up/oidc/callback');
    expect([res.status, res.body.code], res.text).toEqual([400, 'oidc_provider_error']);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await refusalsOf(sessionId, userId)).toMatchObject({ counted: 1, failed: [expect.objectContaining({ method: 'oidc', during: 'step_up', reason: 'oidc_provider_error' })] });
    const lines = service.logs.records().slice(logged);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'identity provider could not be reached', provider_id: id, step: 'step_up_callback' }));
    const text = JSON.stringify(lines);
    for (const secret of [own.clientSecret, back.code, back.state, started.flow_token, token]) expect(text).not.toContain(secret);
    expect((await sensitive(token)).status).toBe(403);
  });

  it('failure: a provider saved under the development setting, its step-up callback at a service running without it: refused and counted, never a 500', async () => {
    const { own, claims, token, sessionId, userId } = await personOfOwnProvider('stepinsecure');
    try {
      const started = await startStepUp(token);
      const back = own.authorize(started.authorization_url, { ...claims, auth_time: Math.floor(Date.now() / 1000) });
      const secure = createTestApp(database.db, { env: { OIDC_ALLOW_INSECURE_ISSUERS: undefined } });
      const res = await request(secure.app).post('/sessions/current/step-up/oidc/callback').set(bearer(token)).send({ ...back, flow_token: started.flow_token });
      expect([res.status, res.body.code], res.text).toEqual([400, 'oidc_provider_error']);
      expect(await refusalsOf(sessionId, userId)).toMatchObject({ counted: 1, failed: [expect.objectContaining({ during: 'step_up', reason: 'oidc_provider_error' })] });
      expect(own.redeemed).toBe(1);
    } finally {
      await own.close();
    }
  });
});

describe('step-up through a provider that no longer answers for the person', { timeout: budget({ passwordHash: 2 }) }, () => {
  it("attack: a provider taken off the person's domain still gives them step-up proofs (start and callback refused oidc_domain_not_allowed, as sign-in is)", async () => {
    const { own, id, domain, claims, token, sessionId, userId } = await personOfOwnProvider('moved');
    try {
      // A step-up begun while the provider still answered for the domain...
      const before = await startStepUp(token);
      // ...then the administrator takes the domain off the provider: it no longer vouches for these people.
      await request(service.app).patch(`/identity-providers/${id}`).set(bearer(adminToken)).send({ domains: [`other-${domain}`] }).expect(200);
      const again = await startSignIn(service.app, { provider_id: id });
      const signInRefused = await request(service.app).post('/sessions/oidc/callback').send({ ...own.authorize(again.authorization_url, claims), flow_token: again.flow_token });
      expect([signInRefused.status, signInRefused.body.code]).toEqual([401, 'oidc_domain_not_allowed']);

      const proved = await complete(token, { ...own.authorize(before.authorization_url, { ...claims, auth_time: Math.floor(Date.now() / 1000) }), flow_token: before.flow_token });
      expectContractResponse(proved, 'post', '/sessions/current/step-up/oidc/callback');
      expect([proved.status, proved.body.code], proved.text).toEqual([400, 'oidc_domain_not_allowed']);
      const refused = await refusalsOf(sessionId, userId);
      expect(refused.counted).toBe(1);
      expect(refused.failed[0]).toMatchObject({ method: 'oidc', during: 'step_up', reason: 'oidc_domain_not_allowed', provider_id: id });

      const started = await request(service.app).post('/sessions/current/step-up/oidc').set(bearer(token));
      expectContractResponse(started, 'post', '/sessions/current/step-up/oidc');
      expect([started.status, started.body.code], started.text).toEqual([400, 'oidc_domain_not_allowed']);
      expect(started.headers['content-type']).toMatch(/^application\/problem\+json/);
      // Recorded as a refused step-up; a start is no answer, so not counted against the session's budget.
      const atStart = await refusalsOf(sessionId, userId);
      expect(atStart.counted).toBe(1);
      expect(atStart.failed).toHaveLength(refused.failed.length + 1);
      expect(atStart.failed[0]).toMatchObject({ method: 'oidc', during: 'step_up', step: 'start', reason: 'oidc_domain_not_allowed', provider_id: id });
      expect(await database.db.selectFrom('oidc_sign_in_flows').select('provider_id').where('step_up_session_id', '=', sessionId).execute()).toEqual([]);
      // Nor is the provider offered any more among the ways to step up; nor a password they do not have.
      const refusal = await sensitive(token);
      expect(refusal.status).toBe(403);
      expect(refusal.body).toMatchObject({ code: 'step_up_required', step_up_methods: [] });
    } finally {
      await own.close();
    }
  });
});
