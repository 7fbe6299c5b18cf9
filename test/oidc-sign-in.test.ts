// Signing in with a company's identity provider, as an attacker tries it, on the real
// service and PostgreSQL, against a hand-made OpenID Provider on loopback (test/support/oidc.ts)
// that forges what a real one never would. The real `oidc-provider`: test/oidc-provider.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { budget } from './support/budgets.js';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { expectContractResponse } from './support/contract.js';
import { digestTables, tableNames } from './support/table-digest.js';
import { addProvider, startHandMadeProvider, startSignIn, type Forgery, type HandMadeProvider, type IdTokenClaims } from './support/oidc.js';
import { enrolTotp, secondStep, signInWithTotp, steppedUp, steppedUpInDatabase, totpCode } from './support/second-factor.js';
import { makeApiKey } from './support/access-fixtures.js';
import { PERMISSIONS } from '../src/auth/permissions.js';
import { ManualClock } from '../src/clock.js';
import { SoftAuthenticator } from './support/passkey.js';
import { sql } from 'kysely';
import { keyring, newSealingKeyLine } from '../src/auth/secrets/sealing-keys.js';
import { openClientSecret } from '../src/auth/identity-providers/client-secret.js';
import { resealAll } from '../src/maintenance/reseal.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { loadConfig, parseSealingKeys } from '../src/config.js';
import { askingProvider, discover, OidcRefusal } from '../src/auth/identity-providers/oidc.js';
import { IssuerRefusedError, ProviderRequestError, providerFetch } from '../src/auth/identity-providers/provider-network.js';
import { makeIdentityProvider } from './support/access-fixtures.js';

let database: TestDatabase;
let op: HandMadeProvider;
let service: ReturnType<typeof createTestApp>;
let admin: { id: string; token: string };
let providerId: string;
const DOMAIN = 'corp.example';

beforeAll(async () => {
  database = await createTestDatabase();
  op = await startHandMadeProvider();
  service = createTestApp(database.db);
  const person = await createUser(database.db, { roles: ['admin'] });
  admin = { id: person.id, token: (await signIn(service.app, person.email, person.password)).access_token };
  // Configuring identity providers needs a fresh proof (x-step-up).
  await steppedUpInDatabase(database.db, person.id);
  await request(service.app).post('/roles').set(auth(admin.token)).send({ name: 'support', permissions: ['users.list', 'users.read'] }).expect(201);
  await request(service.app).post('/roles').set(auth(admin.token)).send({ name: 'planner', permissions: ['meetings.list'] }).expect(201);
  providerId = await addProvider(service.app, admin.token, {
    name: 'Corp',
    issuer: op.issuer,
    client_id: op.clientId,
    client_secret: op.clientSecret,
    domains: [DOMAIN],
    create_unknown_people: true,
    role_mappings: [{ group: 'support-team', roles: ['support'] }],
  });
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await op?.close();
  await database?.destroy();
});

const auth = (token: string) => ({ authorization: `Bearer ${token}` });
let counter = 0;
const newSubject = () => `subject-${++counter}-${Date.now()}`;

/** The whole flow as the person's browser and the back office drive it; the callback's answer. */
async function signInAtProvider(claims: IdTokenClaims, forgery?: Forgery, start: { email: string } | { provider_id: string } = { provider_id: providerId }) {
  const started = await startSignIn(service.app, start);
  const back = op.authorize(started.authorization_url, claims, forgery);
  const res = await request(service.app).post('/sessions/oidc/callback').set('user-agent', 'Firefox/Corp').send({ ...back, flow_token: started.flow_token });
  return { res, started, back };
}

/** A refused callback: its problem, and nothing written but the refusal's event (and the used-up flow). */
async function expectRefusedWithNothingWritten(attempt: () => Promise<request.Response>, code: string) {
  const tables = (await tableNames(database.db)).filter((t) => t !== 'oidc_sign_in_flows');
  const before = await digestTables(database.db, tables);
  const eventsBefore = await database.db.selectFrom('security_events').select('id').where('type', '=', 'sign_in_failed').execute();
  const res = await attempt();
  expect(res.status).toBe(401);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.code).toBe(code);
  expectContractResponse(res, 'POST', '/sessions/oidc/callback');
  expect(await digestTables(database.db, tables)).toEqual(before);
  const refusals = await database.db.selectFrom('security_events').selectAll().where('type', '=', 'sign_in_failed').orderBy('id').execute();
  expect(refusals).toHaveLength(eventsBefore.length + 1);
  expect(refusals.at(-1)!.details).toMatchObject({ method: 'oidc', reason: code });
  return res;
}

describe('signing in with the company identity provider', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('a new person of the domain gets an account with the mapped roles, linked by issuer and subject, and a session of this service (IP, user agent, method oidc)', async () => {
    const sub = newSubject();
    const email = `ada.${counter}@${DOMAIN}`;
    const { res, started } = await signInAtProvider({ sub, email, email_verified: true, given_name: 'Ada', family_name: 'Lovelace', groups: ['support-team', 'other'] }, undefined, { email });
    expect(started.provider).toEqual({ id: providerId, name: 'Corp' });
    const url = new URL(started.authorization_url);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('login_hint')).toBe(email);
    expect(url.searchParams.get('redirect_uri')).toBe('http://localhost:3000/sign-in/oidc');
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions/oidc/callback');
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });

    const me = await request(service.app).get('/me').set(auth(res.body.access_token)).expect(200);
    expect(me.body.user).toMatchObject({ email, first_name: 'Ada', last_name: 'Lovelace' });
    expect(me.body.permissions).toEqual(['users.list', 'users.read']);
    const sessions = await request(service.app).get('/sessions').set(auth(res.body.access_token)).expect(200);
    expect(sessions.body.data[0]).toMatchObject({ authentication_method: 'oidc', user_agent: 'Firefox/Corp', current: true });
    expect(sessions.body.data[0].ip_address).toMatch(/127\.0\.0\.1/);

    const user = await database.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
    expect(user.password_hash).toBeNull();
    expect(await database.db.selectFrom('identity_links').selectAll().where('user_id', '=', user.id).execute()).toMatchObject([{ issuer: op.issuer, subject: sub, provider_id: providerId }]);
    const types = (await database.db.selectFrom('security_events').select('type').where('user_id', '=', user.id).orderBy('id').execute()).map((e) => e.type);
    expect(types).toEqual(['user_created', 'identity_linked', 'user_updated', 'sign_in_succeeded']);
    // Used up: nothing of the flow is left.
    expect(await database.db.selectFrom('oidc_sign_in_flows').selectAll().execute()).toEqual([]);
  });

  it('the groups claim sets the mapped roles at each sign-in: a group left at the provider takes its role away; roles given here by hand stay', async () => {
    const sub = newSubject();
    const email = `grace.${counter}@${DOMAIN}`;
    const first = await signInAtProvider({ sub, email, email_verified: true, groups: ['support-team'] });
    expect(first.res.status).toBe(201);
    const user = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    const planner = await database.db.selectFrom('roles').select('id').where('name', '=', 'planner').executeTakeFirstOrThrow();
    await database.db.insertInto('user_roles').values({ user_id: user.id, role_id: planner.id }).execute();
    const second = await signInAtProvider({ sub, email, email_verified: true, groups: [] });
    expect(second.res.status).toBe(201);
    const me = await request(service.app).get('/me').set(auth(second.res.body.access_token)).expect(200);
    expect(me.body.permissions).toEqual(['meetings.list']);
  });

  it('an existing person is linked by a verified e-mail of the domain; afterwards by subject, so an e-mail changed at the provider still signs them in', async () => {
    const person = await createUser(database.db, { email: `existing.${Date.now()}@${DOMAIN}` });
    const sub = newSubject();
    const linked = await signInAtProvider({ sub, email: person.email.toUpperCase(), email_verified: true });
    expect(linked.res.status).toBe(201);
    const renamed = await signInAtProvider({ sub, email: `renamed.${Date.now()}@elsewhere.example`, email_verified: false });
    expect(renamed.res.status).toBe(201);
    const me = await request(service.app).get('/me').set(auth(renamed.res.body.access_token)).expect(200);
    expect(me.body.user.id).toBe(person.id);
  });

  it('lists providers (also at /fournisseurs-identite) without ever showing the client secret, which is sealed at rest', async () => {
    const list = await request(service.app).get('/identity-providers').set(auth(admin.token)).expect(200);
    expectContractResponse(list, 'GET', '/identity-providers');
    expect(list.text).not.toContain(op.clientSecret);
    expect(list.body.data[0]).toMatchObject({ id: providerId, client_secret_set: true, domains: [DOMAIN], role_mappings: [{ group: 'support-team', roles: ['support'] }], redirect_uri: 'http://localhost:3000/sign-in/oidc' });
    const french = await request(service.app).get('/fournisseurs-identite').set(auth(admin.token)).set('x-api-inflection', 'camel').expect(200);
    expect(french.body.data[0].clientSecretSet).toBe(true);
    const row = await database.db.selectFrom('identity_providers').selectAll().where('id', '=', providerId).executeTakeFirstOrThrow();
    expect(row.client_secret_sealed.includes(Buffer.from(op.clientSecret))).toBe(false);
    const events = await database.db.selectFrom('security_events').select(['changes', 'details']).where('type', '=', 'identity_provider_created').execute();
    expect(JSON.stringify(events)).not.toContain(op.clientSecret);
  });
});

describe('refused, with nothing written but the refusal in the audit journal', { timeout: budget({ passwordHash: 3 }) }, () => {
  const person = () => ({ sub: newSubject(), email: `someone.${counter}@${DOMAIN}`, email_verified: true });

  it('attack: an ID token signed by another key than the provider publishes', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider(person(), { otherKey: true })).res, 'oidc_id_token_invalid');
  });

  it('attack: an expired ID token', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider(person(), { expiresIn: -600 })).res, 'oidc_id_token_invalid');
  });

  it('attack: an ID token made for another audience (another client of the provider)', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider(person(), { aud: 'another-client' })).res, 'oidc_id_token_invalid');
  });

  it('attack: an ID token from another issuer', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider(person(), { iss: 'https://evil.example' })).res, 'oidc_id_token_invalid');
  });

  it('attack: a wrong nonce (an ID token minted for another sign-in)', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider(person(), { nonce: 'nonce-of-another-flow' })).res, 'oidc_id_token_invalid');
  });

  it('attack: a reused state (the same callback sent twice)', async () => {
    const { res, back, started } = await signInAtProvider(person());
    expect(res.status).toBe(201);
    await expectRefusedWithNothingWritten(() => request(service.app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }), 'oidc_state_invalid');
  });

  it('attack: a made-up state', async () => {
    const started = await startSignIn(service.app, { provider_id: providerId });
    const back = op.authorize(started.authorization_url, person());
    await expectRefusedWithNothingWritten(() => request(service.app).post('/sessions/oidc/callback').send({ ...back, state: 'made-up-state', flow_token: started.flow_token }), 'oidc_state_invalid');
  });

  it('attack: login CSRF, the attacker\'s own code and state sent with the victim\'s flow token', async () => {
    const victims = await startSignIn(service.app, { provider_id: providerId });
    const attackers = await startSignIn(service.app, { provider_id: providerId });
    const back = op.authorize(attackers.authorization_url, person());
    await expectRefusedWithNothingWritten(() => request(service.app).post('/sessions/oidc/callback').send({ ...back, flow_token: victims.flow_token }), 'oidc_state_invalid');
  });

  it('attack: a replayed code (the code of a finished sign-in, brought to a new flow)', async () => {
    const { res, back } = await signInAtProvider(person());
    expect(res.status).toBe(201);
    const fresh = await startSignIn(service.app, { provider_id: providerId });
    const state = new URL(fresh.authorization_url).searchParams.get('state')!;
    await expectRefusedWithNothingWritten(() => request(service.app).post('/sessions/oidc/callback').send({ code: back.code, state, iss: back.iss, flow_token: fresh.flow_token }), 'oidc_code_rejected');
  });

  it('attack: an e-mail the provider does not say is verified, claiming an existing account', async () => {
    const victim = await createUser(database.db, { email: `victim.${Date.now()}@${DOMAIN}` });
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub: newSubject(), email: victim.email, email_verified: false })).res, 'oidc_email_unverified');
  });

  it('attack: a provider vouching for an address the contract would not take creates nobody (the person would break every answer showing them)', async () => {
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub: newSubject(), email: `"w"&<x>|${Date.now()}@${DOMAIN}`, email_verified: true })).res, 'oidc_email_unverified');
  });

  it('attack: an e-mail of a domain this provider does not answer for', async () => {
    const victim = await createUser(database.db, { email: `victim.${Date.now()}@other-company.example` });
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub: newSubject(), email: victim.email, email_verified: true })).res, 'oidc_domain_not_allowed');
  });

  it('attack: takeover by a new subject given a linked person\'s e-mail at the provider', async () => {
    const email = `linked.${Date.now()}@${DOMAIN}`;
    expect((await signInAtProvider({ sub: newSubject(), email, email_verified: true })).res.status).toBe(201);
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub: newSubject(), email, email_verified: true })).res, 'oidc_identity_conflict');
  });

  it('attack: race, two simultaneous first sign-ins of the same person (new, then existing): one gets in, the other is refused oidc_identity_conflict (never a 500), nothing of it written', async () => {
    for (const existing of [false, true]) {
      const sub = newSubject();
      const email = `racer.${counter}.${Date.now()}@${DOMAIN}`;
      if (existing) await createUser(database.db, { email });
      const flows = await Promise.all([0, 1].map(async () => {
        const started = await startSignIn(service.app, { provider_id: providerId });
        return { started, back: op.authorize(started.authorization_url, { sub, email, email_verified: true }) };
      }));
      // Both callbacks get past the look-up of the link before either writes: the test holds
      // off writes to identity_links until both wait, then lets them go together.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => (locked = resolve));
      const holder = database.db.transaction().execute(async (trx) => {
        await sql`lock table identity_links in share row exclusive mode`.execute(trx);
        locked();
        await held;
      });
      await isLocked;
      const answers = flows.map(({ started, back }) => request(service.app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }).then((r) => r));
      for (;;) {
        const waiting = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(database.db);
        if (waiting.rows[0]!.n >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      release();
      await holder;
      const results = await Promise.all(answers);
      expect(results.map((r) => r.status).sort()).toEqual([201, 401]);
      const refused = results.find((r) => r.status === 401)!;
      expect(refused.body.code).toBe('oidc_identity_conflict');
      expectContractResponse(refused, 'POST', '/sessions/oidc/callback');
      const user = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
      expect(await database.db.selectFrom('identity_links').select('subject').where('user_id', '=', user.id).execute()).toEqual([{ subject: sub }]);
      expect(await database.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute()).toHaveLength(1);
    }
  });

  it('attack: a link outliving its provider: through another provider of the same issuer (its role mappings), after the domain is taken off, after the provider is deleted', async () => {
    const stamp = Date.now();
    const leaving = `leaving-${stamp}.example`;
    const ownId = await addProvider(service.app, admin.token, { name: `Leaving ${stamp}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: [leaving], create_unknown_people: true });
    // Another company on the same issuer (as many are on Google's), mapping a group to a role.
    const otherId = await addProvider(service.app, admin.token, { name: `Other ${stamp}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: [`other-${stamp}.example`], create_unknown_people: false, role_mappings: [{ group: 'planners', roles: ['planner'] }] });
    const sub = newSubject();
    const email = `someone@${leaving}`;
    expect((await signInAtProvider({ sub, email, email_verified: true }, undefined, { provider_id: ownId })).res.status).toBe(201);

    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub, email, email_verified: true, groups: ['planners'] }, undefined, { provider_id: otherId })).res, 'oidc_domain_not_allowed');

    await request(service.app).patch(`/identity-providers/${ownId}`).set(auth(admin.token)).send({ domains: [`kept-${stamp}.example`] }).expect(200);
    await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub, email, email_verified: true }, undefined, { provider_id: ownId })).res, 'oidc_domain_not_allowed');

    await request(service.app).delete(`/identity-providers/${ownId}`).set(auth(admin.token)).expect(204);
    expect(await database.db.selectFrom('identity_links').select('provider_id').where('subject', '=', sub).execute()).toEqual([]);
    await request(service.app).delete(`/identity-providers/${otherId}`).set(auth(admin.token)).expect(204);
  });

  it('attack: a disabled person signing in at the provider', async () => {
    const sub = newSubject();
    const email = `leaver.${Date.now()}@${DOMAIN}`;
    expect((await signInAtProvider({ sub, email, email_verified: true, groups: ['support-team'] })).res.status).toBe(201);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('email', '=', email).execute();
    const res = await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub, email, email_verified: true, groups: [] })).res, 'oidc_account_disabled');
    expect(res.body.detail).toBe('This account is disabled.');
  });

  it('an unknown person, when the provider does not create accounts', async () => {
    await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ create_unknown_people: false }).expect(200);
    try {
      await expectRefusedWithNothingWritten(async () => (await signInAtProvider({ sub: newSubject(), email: `nobody.${Date.now()}@${DOMAIN}`, email_verified: true })).res, 'oidc_unknown_person');
    } finally {
      await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ create_unknown_people: true }).expect(200);
    }
  });

  it('an expired flow (past OIDC_FLOW_TTL_S)', async () => {
    const clock = new ManualClock(new Date());
    const late = createTestApp(database.db, { clock });
    const started = await startSignIn(late.app, { provider_id: providerId });
    const back = op.authorize(started.authorization_url, person());
    clock.advance(601_000);
    await expectRefusedWithNothingWritten(() => request(late.app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }), 'oidc_state_invalid');
  });

  it('no provider for the e-mail\'s domain: 404, nothing started', async () => {
    const res = await request(service.app).post('/sessions/oidc').send({ email: 'someone@nowhere.example' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('identity_provider_not_found');
    expectContractResponse(res, 'POST', '/sessions/oidc');
  });
});

describe('refused when the provider cannot be asked at the callback: 401 oidc_provider_error, never a 500', { timeout: budget({ passwordHash: 3 }) }, () => {
  /** What another process sees (or this one once its 10-minute discovery cache has expired): no kept discovery for the provider. */
  const forgetKeptDiscovery = (id: string) => database.db.updateTable('identity_providers').set({ updated_at: new Date(Date.now() + 1000) }).where('id', '=', id).execute();

  it('failure: the provider down at the callback, its discovery read again (another process, or past the 10-minute cache): refused and logged, no secret in the log', async () => {
    const down = await startHandMadeProvider();
    const domain = `down-${Date.now()}.example`;
    const id = await addProvider(service.app, admin.token, { name: `Down ${domain}`, issuer: down.issuer, client_id: down.clientId, client_secret: down.clientSecret, domains: [domain], create_unknown_people: true });
    const started = await startSignIn(service.app, { provider_id: id });
    const back = down.authorize(started.authorization_url, { sub: newSubject(), email: `ada@${domain}`, email_verified: true });
    await down.close();
    await forgetKeptDiscovery(id);
    const logged = service.logs.records().length;
    const res = await expectRefusedWithNothingWritten(() => request(service.app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }), 'oidc_provider_error');
    expect(res.body.detail).toBe('The identity provider could not be reached.');
    const lines = service.logs.records().slice(logged);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'identity provider could not be reached', provider_id: id, step: 'sign_in_callback' }));
    const text = JSON.stringify(lines);
    for (const secret of [down.clientSecret, back.code, back.state, started.flow_token]) expect(text).not.toContain(secret);
    await request(service.app).delete(`/identity-providers/${id}`).set(auth(admin.token)).expect(204);
  });

  it('failure: a provider whose discovery names no authorization endpoint: the start answers 401 oidc_provider_error, never a 500', async () => {
    const broken = await startHandMadeProvider({ discovery: (document) => delete document.authorization_endpoint });
    try {
      const domain = `broken-${Date.now()}.example`;
      const id = await addProvider(service.app, admin.token, { name: `Broken ${domain}`, issuer: broken.issuer, client_id: broken.clientId, client_secret: broken.clientSecret, domains: [domain], create_unknown_people: true });
      const res = await request(service.app).post('/sessions/oidc').send({ provider_id: id });
      expect([res.status, res.body.code], res.text).toEqual([401, 'oidc_provider_error']);
      expectContractResponse(res, 'POST', '/sessions/oidc');
      await request(service.app).delete(`/identity-providers/${id}`).set(auth(admin.token)).expect(204);
    } finally {
      await broken.close();
    }
  });

  it('only the provider failing to answer is oidc_provider_error: a bug of ours met meanwhile stays the 500 it is', async () => {
    for (const failure of [new ProviderRequestError('fetch failed'), new IssuerRefusedError('must use https', true), new DOMException('timed out', 'TimeoutError')]) {
      const refusal = await askingProvider(Promise.reject(failure)).catch((err: unknown) => err);
      expect(refusal, failure.name).toBeInstanceOf(OidcRefusal);
      expect(refusal).toMatchObject({ reason: 'provider_error', cause: failure });
    }
    const bug = new TypeError("Cannot read properties of undefined (reading 'issuer')");
    await expect(askingProvider(Promise.reject(bug))).rejects.toBe(bug);
  });
});

describe('password and second factor for people of the provider', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('sso_required: a person of the domain may not use a password (403 sso_required), before the password is looked at', async () => {
    const person = await createUser(database.db, { email: `pw.${Date.now()}@${DOMAIN}` });
    expect((await request(service.app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(201);
    await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ sso_required: true }).expect(200);
    try {
      const res = await request(service.app).post('/sessions').send({ session: { email: person.email, password: person.password } });
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('sso_required');
      expectContractResponse(res, 'POST', '/sessions');
      const unknown = await request(service.app).post('/sessions').send({ session: { email: `nobody@${DOMAIN}`, password: 'whatever it is' } });
      expect(unknown.body.code).toBe('sso_required');
    } finally {
      await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ sso_required: false }).expect(200);
    }
  });

  it('attack: a subject that never passes the second factor takes the account\'s link and its group roles', async () => {
    const clock = new ManualClock(new Date('2026-12-23T11:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db, { email: `held.${Date.now()}@${DOMAIN}` });
    const set = await signIn(app, person.email, person.password);
    const { secret } = await enrolTotp(app, set.access_token, clock, person.password);
    clock.advance(30_000);
    const callback = async (sub: string, groups: string[]) => {
      const started = await startSignIn(app, { provider_id: providerId });
      const back = op.authorize(started.authorization_url, { sub, email: person.email, email_verified: true, groups });
      return request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token });
    };
    const rolesOf = async () => (await database.db.selectFrom('user_roles').select('role_id').where('user_id', '=', person.id).execute()).length;
    const attempt = await callback(newSubject(), ['support-team']);
    expect(attempt.status).toBe(202);
    expect((await secondStep(app, { challenge_token: attempt.body.second_factor.challenge_token, totp_code: '000000' })).status).toBe(401);
    expect(await database.db.selectFrom('identity_links').select('subject').where('user_id', '=', person.id).execute()).toEqual([]);
    expect(await rolesOf()).toBe(0);

    const sub = newSubject();
    const real = await callback(sub, ['support-team']);
    expect(real.status).toBe(202);
    expect((await secondStep(app, { challenge_token: real.body.second_factor.challenge_token, totp_code: totpCode(secret, clock.now()) })).status).toBe(201);
    expect(await database.db.selectFrom('identity_links').select('subject').where('user_id', '=', person.id).execute()).toEqual([{ subject: sub }]);
    expect(await rolesOf()).toBe(1);
  });

  it('a person with an authenticator app gets the usual second step after the provider (session oidc_totp), unless the provider\'s amr counts as one (oidc_provider_mfa)', async () => {
    const clock = new ManualClock(new Date('2026-12-23T10:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db, { email: `totp.${Date.now()}@${DOMAIN}` });
    const set = await signIn(app, person.email, person.password);
    const { secret } = await enrolTotp(app, set.access_token, clock, person.password);
    clock.advance(30_000);
    const sub = newSubject();
    const flow = async (amr: string[]) => {
      const started = await startSignIn(app, { provider_id: providerId });
      const back = op.authorize(started.authorization_url, { sub, email: person.email, email_verified: true, amr });
      return request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token });
    };
    const challenged = await flow(['mfa']);
    expect(challenged.status).toBe(202);
    expectContractResponse(challenged, 'POST', '/sessions/oidc/callback');
    const second = await secondStep(app, { challenge_token: challenged.body.second_factor.challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(second.status).toBe(201);
    const sessions = await request(app).get('/sessions').set(auth(second.body.access_token)).expect(200);
    expect(sessions.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('oidc_totp');

    await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ second_factor_amr: ['mfa'] }).expect(200);
    try {
      expect((await flow(['pwd'])).status).toBe(202);
      const trusted = await flow(['pwd', 'mfa']);
      expect(trusted.status).toBe(201);
      const now = await request(app).get('/sessions').set(auth(trusted.body.access_token)).expect(200);
      expect(now.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('oidc_provider_mfa');
    } finally {
      await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ second_factor_amr: [] }).expect(200);
    }
  });
});

describe('a passkey as the second step after the provider', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('a person with a passkey here is offered it after the provider (its options in the 202), and the session says oidc_passkey', async () => {
    const clock = new ManualClock(new Date('2026-12-23T11:00:00.000Z'));
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db, { email: `passkey.${Date.now()}@${DOMAIN}` });
    const set = await signIn(app, person.email, person.password);
    await steppedUp(app, set.access_token, person.password);
    const started = await request(app).post('/me/passkeys/registration').set(auth(set.access_token));
    expect(started.status, started.text).toBe(201);
    const authenticator = new SoftAuthenticator();
    const registered = await request(app).post('/me/passkeys').set(auth(set.access_token)).send({ name: 'Laptop', credential: authenticator.register(started.body.options) });
    expect(registered.status, registered.text).toBe(201);
    clock.advance(30_000);
    const flow = await startSignIn(app, { provider_id: providerId });
    const back = op.authorize(flow.authorization_url, { sub: newSubject(), email: person.email, email_verified: true });
    const challenged = await request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: flow.flow_token });
    expect(challenged.status).toBe(202);
    expectContractResponse(challenged, 'POST', '/sessions/oidc/callback');
    expect(challenged.body.second_factor.methods).toContain('passkey');
    const options = challenged.body.second_factor.passkey_options;
    expect(options).toMatchObject({ userVerification: 'required', allowCredentials: [{ id: authenticator.credentialId, type: 'public-key' }] });
    const res = await request(app).post('/sessions/second-factor').send({ challenge_token: challenged.body.second_factor.challenge_token, passkey: authenticator.assert(options.challenge) });
    expect(res.status, res.text).toBe(201);
    const sessions = await request(app).get('/sessions').set(auth(res.body.access_token)).expect(200);
    expect(sessions.body.data.find((s: { current: boolean }) => s.current).authentication_method).toBe('oidc_passkey');
  });
});

describe('managing providers: nobody gains a right they do not hold', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('a change that changes nothing writes nothing: updated_at stays, nothing is recorded', async () => {
    const read = await request(service.app).get(`/identity-providers/${providerId}`).set(auth(admin.token)).expect(200);
    const events = () => database.db.selectFrom('security_events').select('id').where('type', '=', 'identity_provider_updated').execute();
    const before = await events();
    // A minute later than anything written so far.
    const later = createTestApp(database.db, { clock: new ManualClock(new Date(Date.now() + 60_000)) });
    const { name, domains, sso_required, role_mappings } = read.body;
    const same = await request(later.app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ name, domains, sso_required, role_mappings }).expect(200);
    expect(same.body).toEqual(read.body);
    expect(await events()).toEqual(before);
  });

  it('attack: a manager of providers (and roles) who is not an administrator maps a group to the admin role, or adds a provider at all', async () => {
    const manager = await createUser(database.db, { permissions: ['identity_providers.manage', 'roles.manage'] });
    const token = (await signIn(service.app, manager.email, manager.password)).access_token;
    await steppedUpInDatabase(database.db, manager.id);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const mapping = await request(service.app).patch(`/identity-providers/${providerId}`).set(auth(token)).send({ role_mappings: [{ group: 'everyone', roles: ['admin'] }] });
    expect(mapping.status).toBe(403);
    expect(mapping.body.code).toBe('target_outranks_caller');
    expectContractResponse(mapping, 'PATCH', '/identity-providers/{id}');
    const own = await request(service.app).post('/identity-providers').set(auth(token)).send({ name: 'Mine', issuer: op.issuer, client_id: 'x', client_secret: 'y', domains: ['mine.example'] });
    expect(own.status).toBe(403);
    expect(await digestTables(database.db, tables)).toEqual(before);
    // Reading is what the permission gives.
    expect((await request(service.app).get(`/identity-providers/${providerId}`).set(auth(token))).status).toBe(200);
  });

  it('refuses a domain another provider answers for (409 domain_taken), an unknown role, an issuer that is not one, and answers 404 for an unknown id', async () => {
    const base = { name: `Other ${Date.now()}`, issuer: op.issuer, client_id: 'x', client_secret: 'y' };
    const taken = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ ...base, domains: [DOMAIN.toUpperCase()] });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('domain_taken');
    const role = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ ...base, domains: ['free.example'], role_mappings: [{ group: 'g', roles: ['no-such-role'] }] });
    expect(role.status).toBe(400);
    expect(role.body.code).toBe('unknown_role');
    const unreachable = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ ...base, issuer: 'http://127.0.0.1:9/nothing', domains: ['free.example'] });
    expect(unreachable.status).toBe(400);
    expect(unreachable.body.code).toBe('issuer_unreachable');
    // Plain http and addresses in the service's own network: "security: ..." below.
    // A URI to the contract's schema that no URL parser takes (found by test/fuzz.test.ts: it was a 500).
    const hostless = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ ...base, issuer: 'http://', domains: ['free.example'] });
    expect([hostless.status, hostless.body.code]).toEqual([400, 'validation_failed']);
    for (const id of ['00000000-0000-4000-8000-00000000abcd', 'not-an-id']) {
      expect((await request(service.app).get(`/identity-providers/${id}`).set(auth(admin.token))).status).toBe(404);
      expect((await request(service.app).delete(`/identity-providers/${id}`).set(auth(admin.token))).status).toBe(404);
    }
  });
});

describe('the client secret under the sealing keys (SEALING_KEYS), not the database', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('attack: a stolen backup opens no client secret: no sealing secret in the database, no stored 32-byte value opens it', async () => {
    const row = await database.db.selectFrom('identity_providers').selectAll().where('id', '=', providerId).executeTakeFirstOrThrow();
    expect(row.client_secret_key_id).toBe(testConfig().sealingKeys![0]!.id);
    expect(await database.db.selectFrom('service_secrets').select('name').execute()).not.toContainEqual({ name: 'identity_provider_sealing' });
    const { rows: tables } = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(database.db);
    const candidates: Buffer[] = [];
    for (const { table_name } of tables) {
      const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table_name)}`.execute(database.db);
      for (const value of rows.flatMap((r) => Object.values(r))) if (Buffer.isBuffer(value) && value.length === 32) candidates.push(value);
    }
    expect(candidates.length).toBeGreaterThan(0);
    const opens = (key: Buffer) => {
      try {
        openClientSecret(keyring([{ id: 'stolen', key }]), { ...row, client_secret_key_id: 'stolen' });
        return true;
      } catch {
        return false;
      }
    };
    expect(candidates.filter(opens)).toEqual([]);
    expect(openClientSecret(keyring(testConfig().sealingKeys!), row)).toBe(op.clientSecret);
  });

  it('a new sealing key first: reseal moves the secret to it, and signing in works with the new key alone', async () => {
    const fresh = parseSealingKeys(newSealingKeyLine('identity-next'), 'test');
    const both = [...fresh, ...testConfig().sealingKeys!];
    const report = await resealAll(database.db, keyring(both));
    expect(report).toMatchObject({ clientSecretsUnopenable: 0 });
    expect(report.clientSecretsResealed).toBeGreaterThanOrEqual(1);
    const row = await database.db.selectFrom('identity_providers').select('client_secret_key_id').where('id', '=', providerId).executeTakeFirstOrThrow();
    expect(row.client_secret_key_id).toBe('identity-next');
    const onlyNew = createTestApp(database.db, { env: { SEALING_KEYS: `identity-next:${fresh[0]!.key.toString('base64')}` } });
    const started = await startSignIn(onlyNew.app, { provider_id: providerId });
    const back = op.authorize(started.authorization_url, { sub: newSubject(), email: `resealed.${counter}@${DOMAIN}`, email_verified: true });
    const res = await request(onlyNew.app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token });
    expect(res.status).toBe(201);
    // Back under the test key, for whatever runs after.
    await resealAll(database.db, keyring([...testConfig().sealingKeys!, ...fresh]));
  });
});

describe('security: a stolen access token and identity providers', { timeout: budget({ passwordHash: 4 }) }, () => {
  /** An administrator with a confirmed authenticator app, and a copy of their access token from a session with no fresh proof. */
  async function administratorWithTotp(domain: string) {
    const clock = new ManualClock(new Date());
    const { app } = createTestApp(database.db, { clock });
    const person = await createUser(database.db, { email: `root.${Date.now()}@${domain}`, roles: ['admin'] });
    const first = await signIn(app, person.email, person.password);
    const { secret } = await enrolTotp(app, first.access_token, clock, person.password);
    clock.advance(30_000);
    const stolen = (await signInWithTotp(app, person, secret, clock)).access_token;
    return { app, clock, person, secret, stolen };
  }

  it('attack: a copy of an administrator\'s access token (no fresh proof) adds, changes or removes an identity provider', async () => {
    const attacker = await startHandMadeProvider();
    try {
      const domain = `stolen-${Date.now()}.example`;
      const { app, stolen } = await administratorWithTotp(domain);
      const before = await database.db.selectFrom('identity_providers').select('id').execute();
      const fields = { name: 'Evil', issuer: attacker.issuer, client_id: attacker.clientId, client_secret: attacker.clientSecret, domains: [domain], second_factor_amr: ['mfa'] };
      for (const path of ['/identity-providers', '/fournisseurs-identite']) {
        const res = await request(app).post(path).set(auth(stolen)).send(fields);
        expect(res.status, res.text).toBe(403);
        expect(res.body.code).toBe('step_up_required');
        expectContractResponse(res, 'POST', path);
      }
      const changed = await request(app).patch(`/identity-providers/${providerId}`).set(auth(stolen)).send({ domains: [DOMAIN, domain], second_factor_amr: ['mfa'] });
      expect(changed.status, changed.text).toBe(403);
      expect(changed.body.code).toBe('step_up_required');
      const removed = await request(app).delete(`/identity-providers/${providerId}`).set(auth(stolen));
      expect(removed.status, removed.text).toBe(403);
      expect(removed.body.code).toBe('step_up_required');
      expect(await database.db.selectFrom('identity_providers').select('id').execute()).toEqual(before);
      const corp = await request(service.app).get(`/identity-providers/${providerId}`).set(auth(admin.token)).expect(200);
      expect(corp.body).toMatchObject({ domains: [DOMAIN], second_factor_amr: [] });
    } finally {
      await attacker.close();
    }
  });

  it('attack: an API key holding identity_providers.manage adds or changes an identity provider', async () => {
    const attacker = await startHandMadeProvider();
    try {
      // Every permission: enough for any provider, so only the kind of caller can refuse it.
      const key = await makeApiKey(database.db, [...PERMISSIONS]);
      const domain = `keyed-${Date.now()}.example`;
      const added = await request(service.app).post('/identity-providers').set('x-api-key', key.secret).send({ name: 'Keyed', issuer: attacker.issuer, client_id: attacker.clientId, client_secret: attacker.clientSecret, domains: [domain] });
      expect(added.status, added.text).toBe(401);
      expectContractResponse(added, 'POST', '/identity-providers');
      const changed = await request(service.app).patch(`/identity-providers/${providerId}`).set('x-api-key', key.secret).send({ domains: [DOMAIN, domain] });
      expect(changed.status, changed.text).toBe(401);
      expect(await database.db.selectFrom('identity_providers').select('id').where('name', '=', 'Keyed').execute()).toEqual([]);
    } finally {
      await attacker.close();
    }
  });

  it('attack: a provider whose amr vouches for a second factor signs in, on its first sign-in, as an existing person who holds their own second factor', async () => {
    const attacker = await startHandMadeProvider();
    const domain = `vouched-${Date.now()}.example`;
    const { app, clock, person, secret } = await administratorWithTotp(domain);
    // Added legitimately (a fresh proof), yet the provider is not who the person proved their factor to.
    const id = await addProvider(service.app, admin.token, { name: `Vouching ${domain}`, issuer: attacker.issuer, client_id: attacker.clientId, client_secret: attacker.clientSecret, domains: [domain], second_factor_amr: ['mfa'] });
    try {
      const sub = newSubject();
      const flow = async () => {
        const started = await startSignIn(app, { provider_id: id });
        const back = attacker.authorize(started.authorization_url, { sub, email: person.email, email_verified: true, amr: ['mfa'] });
        return request(app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token });
      };
      const first = await flow();
      expect(first.status, first.text).toBe(202);
      expect(first.body.second_factor.methods).toContain('totp');
      expect(await database.db.selectFrom('identity_links').select('subject').where('user_id', '=', person.id).execute()).toEqual([]);
      // The person proves their own factor once: the link is made, and from then on the provider's amr counts.
      clock.advance(30_000);
      const proved = await secondStep(app, { challenge_token: first.body.second_factor.challenge_token, totp_code: totpCode(secret, clock.now()) });
      expect(proved.status, proved.text).toBe(201);
      expect(await database.db.selectFrom('identity_links').select('subject').where('user_id', '=', person.id).execute()).toEqual([{ subject: sub }]);
      expect((await flow()).status).toBe(201);
    } finally {
      await request(service.app).delete(`/identity-providers/${id}`).set(auth(admin.token)).expect(204);
      await attacker.close();
    }
  });
});

/**
 * A listener on this host's loopback, standing for whatever the service's own network holds (an
 * admin port, a database's HTTP interface): it answers a discovery document naming itself, so a
 * service that calls it accepts it. Counts every connection made to it.
 */
async function startLoopbackListener() {
  let connections = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname !== '/.well-known/openid-configuration') return res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }));
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const issuer = `http://127.0.0.1:${port}`;
  return {
    issuer,
    port,
    connections: () => connections,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

describe('security: an issuer must be https and public unless OIDC_ALLOW_INSECURE_ISSUERS (development) says otherwise', { timeout: budget({ passwordHash: 3 }) }, () => {
  /** The service as deployed: the setting left to its default (the tests' harness turns it on). */
  const secure = () => createTestApp(database.db, { env: { OIDC_ALLOW_INSECURE_ISSUERS: undefined } });

  it("attack: an identity provider's discovery over plain http makes the server call its own loopback", async () => {
    const listener = await startLoopbackListener();
    try {
      const { app } = secure();
      const tables = await tableNames(database.db);
      const before = await digestTables(database.db, tables);
      const res = await request(app).post('/identity-providers').set(auth(admin.token)).send({ name: 'Loopback', issuer: listener.issuer, client_id: 'x', client_secret: 'y', domains: ['loopback.example'] });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('issuer_refused');
      expect(res.body.detail).toContain('OIDC_ALLOW_INSECURE_ISSUERS=true');
      expectContractResponse(res, 'POST', '/identity-providers');
      expect(listener.connections()).toBe(0);
      expect(await digestTables(database.db, tables)).toEqual(before);
      // The listener is a provider a service would accept: under the development setting, it is.
      const development = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ name: 'Loopback', issuer: listener.issuer, client_id: 'x', client_secret: 'y', domains: ['loopback.example'] });
      expect(development.status).toBe(201);
      expect(listener.connections()).toBeGreaterThan(0);
      await request(service.app).delete(`/identity-providers/${development.body.id}`).set(auth(admin.token)).expect(204);
    } finally {
      await listener.close();
    }
  });

  it('attack: an issuer changed to the loopback over http, or an https issuer on a loopback or private address: refused, nothing sent, nothing written', async () => {
    const listener = await startLoopbackListener();
    try {
      const { app } = secure();
      const tables = await tableNames(database.db);
      const before = await digestTables(database.db, tables);
      const changed = await request(app).patch(`/identity-providers/${providerId}`).set(auth(admin.token)).send({ issuer: listener.issuer });
      expect([changed.status, changed.body.code]).toEqual([400, 'issuer_refused']);
      expect(changed.body.detail).toBe('The issuer must use https; for a local development provider set OIDC_ALLOW_INSECURE_ISSUERS=true (never in production).');
      expectContractResponse(changed, 'PATCH', '/identity-providers/{id}');
      for (const issuer of [`https://127.0.0.1:${listener.port}`, `https://localhost:${listener.port}`, `https://[::1]:${listener.port}`, `https://[::ffff:127.0.0.1]:${listener.port}`, 'https://10.1.2.3', 'https://192.168.0.1/realms/corp']) {
        const res = await request(app).post('/identity-providers').set(auth(admin.token)).send({ name: 'Inside', issuer, client_id: 'x', client_secret: 'y', domains: ['inside.example'] });
        expect([issuer, res.status, res.body.code]).toEqual([issuer, 400, 'issuer_refused']);
        expect(res.body.detail).toMatch(/^The issuer resolves to .+, an address that is not public .+; for a local development provider set OIDC_ALLOW_INSECURE_ISSUERS=true/);
        expect(res.body.errors).toEqual([expect.objectContaining({ location: 'request/body/issuer', error_code: 'issuer_refused' })]);
      }
      expect(listener.connections()).toBe(0);
      expect(await digestTables(database.db, tables)).toEqual(before);
    } finally {
      await listener.close();
    }
  });

  it('attack: a cloud metadata address as the issuer, even under the development setting', async () => {
    for (const issuer of ['http://169.254.169.254/latest', 'https://169.254.169.254', 'http://[fd00:ec2::254]', 'http://100.100.100.200']) {
      const res = await request(service.app).post('/identity-providers').set(auth(admin.token)).send({ name: 'Metadata', issuer, client_id: 'x', client_secret: 'y', domains: ['metadata.example'] });
      expect([issuer, res.status, res.body.code]).toEqual([issuer, 400, 'issuer_refused']);
      expect(res.body.detail).toMatch(/a cloud metadata address, which the service never calls\.$/);
    }
  });

  it('attack: a provider saved under the development setting is not called by a service running without it (its kept discovery included)', async () => {
    const listener = await startLoopbackListener();
    try {
      const id = await makeIdentityProvider(database.db, listener.issuer, ['saved-loopback.example']);
      // Discovered (and kept in this process) by the service under the development setting...
      await request(service.app).post('/sessions/oidc').send({ provider_id: id }).expect(201);
      const called = listener.connections();
      expect(called).toBeGreaterThan(0);
      // ...and refused by one without it, before any request.
      const res = await request(secure().app).post('/sessions/oidc').send({ provider_id: id });
      expect([res.status, res.body.code]).toEqual([401, 'oidc_provider_error']);
      expect(listener.connections()).toBe(called);
      await database.db.deleteFrom('identity_providers').where('id', '=', id).execute();
    } finally {
      await listener.close();
    }
  });

  it('failure: a provider saved under the development setting, its callback at a service running without it: 401 oidc_provider_error (the flow is in the database), never a 500', async () => {
    const domain = `insecure-${Date.now()}.example`;
    const id = await addProvider(service.app, admin.token, { name: `Insecure ${domain}`, issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: [domain], create_unknown_people: true });
    const started = await startSignIn(service.app, { provider_id: id });
    const back = op.authorize(started.authorization_url, { sub: newSubject(), email: `ada@${domain}`, email_verified: true });
    const redeemed = op.redeemed;
    // The same deployment restarted without the development setting.
    await expectRefusedWithNothingWritten(() => request(secure().app).post('/sessions/oidc/callback').send({ ...back, flow_token: started.flow_token }), 'oidc_provider_error');
    expect(op.redeemed).toBe(redeemed);
    await request(service.app).delete(`/identity-providers/${id}`).set(auth(admin.token)).expect(204);
  });

  it("attack: a discovery document naming a token endpoint or keys in the server's own network: every request of the provider goes through the guarded fetch", async () => {
    const listener = await startLoopbackListener();
    try {
      const guarded = providerFetch({ allowInsecure: false });
      const get = { method: 'GET', headers: {}, body: undefined, redirect: 'manual' as const };
      for (const url of [`${listener.issuer}/token`, `https://127.0.0.1:${listener.port}/token`, `https://localhost:${listener.port}/jwks`, `https://[::1]:${listener.port}/jwks`]) {
        await expect(guarded(url, get), url).rejects.toThrow(TypeError);
      }
      expect(listener.connections()).toBe(0);
      // The development setting allows the loopback, never a metadata address.
      const lax = providerFetch({ allowInsecure: true });
      expect((await lax(`${listener.issuer}/.well-known/openid-configuration`, get)).status).toBe(200);
      await expect(lax('http://169.254.169.254/latest/meta-data/', get)).rejects.toThrow(/fetch refused/);
      // What openid-client uses for the token and key requests after discovery is that fetch.
      const config = await discover({ issuer: listener.issuer, clientId: 'x', clientSecret: 'y' }, { allowInsecure: true });
      await expect(config[client.customFetch]!('http://169.254.169.254/latest/meta-data/', get)).rejects.toThrow(/fetch refused/);
    } finally {
      await listener.close();
    }
  });

  it('the setting is off by default and refused in production', () => {
    expect(loadConfig({}).oidc.issuers).toEqual({ allowInsecure: false });
    expect(loadConfig({ NODE_ENV: 'development', OIDC_ALLOW_INSECURE_ISSUERS: 'true' }).oidc.issuers).toEqual({ allowInsecure: true });
    expect(() => loadConfig({ NODE_ENV: 'production', OIDC_ALLOW_INSECURE_ISSUERS: 'true' })).toThrow(/OIDC_ALLOW_INSECURE_ISSUERS: not with NODE_ENV=production/);
  });
});
