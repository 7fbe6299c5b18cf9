// Signing in against a real OpenID Provider (the `oidc-provider` package) on loopback: the whole
// flow through its login page, as the back office drives it, and the attacks a real provider lets
// one try: a replayed code, a code of another client's flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { budget } from './support/budgets.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { addProvider, startSignIn } from './support/oidc.js';
import { signInAt, startRealProvider, type RealProvider } from './support/oidc-provider.js';

const REDIRECT_URI = 'http://localhost:3000/sign-in/oidc';
let database: TestDatabase;
let op: RealProvider;
let service: ReturnType<typeof createTestApp>;
let providerId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  op = await startRealProvider(REDIRECT_URI);
  service = createTestApp(database.db);
  const admin = await createUser(database.db, { roles: ['admin'] });
  const token = (await signIn(service.app, admin.email, admin.password)).access_token;
  // Configuring identity providers needs a fresh proof (x-step-up).
  await steppedUpInDatabase(database.db, admin.id);
  await request(service.app).post('/roles').set('authorization', `Bearer ${token}`).send({ name: 'support', permissions: ['users.list'] }).expect(201);
  providerId = await addProvider(service.app, token, {
    name: 'Keycloak of Corp',
    issuer: op.issuer,
    client_id: op.clientId,
    client_secret: op.clientSecret,
    domains: ['corp.example'],
    scopes: ['openid', 'email', 'profile', 'groups'],
    create_unknown_people: true,
    role_mappings: [{ group: 'support', roles: ['support'] }],
  });
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await op?.close();
  await database?.destroy();
});

const callback = (back: URL, flowToken: string) =>
  request(service.app).post('/sessions/oidc/callback').send({ code: back.searchParams.get('code'), state: back.searchParams.get('state'), iss: back.searchParams.get('iss') ?? undefined, flow_token: flowToken });

describe('signing in through a real OpenID Provider', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('through its login page into a session of this service, with the roles of the groups claim', async () => {
    op.accounts.set('ada-1', { email: 'ada@corp.example', email_verified: true, given_name: 'Ada', family_name: 'Lovelace', groups: ['support'] });
    const started = await startSignIn(service.app, { email: 'ada@corp.example' });
    expect(started.provider.id).toBe(providerId);
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'ada-1');
    expect(back.searchParams.get('iss')).toBe(op.issuer);
    const res = await callback(back, started.flow_token);
    expect(res.status).toBe(201);
    expectContractResponse(res, 'POST', '/sessions/oidc/callback');
    const me = await request(service.app).get('/me').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(me.body.user).toMatchObject({ email: 'ada@corp.example', first_name: 'Ada', last_name: 'Lovelace' });
    expect(me.body.permissions).toEqual(['users.list']);
    const sessions = await request(service.app).get('/sessions').set('authorization', `Bearer ${res.body.access_token}`).expect(200);
    expect(sessions.body.data[0].authentication_method).toBe('oidc');
  });

  it('attack: the code replayed (the callback of a finished sign-in, with a new flow of the same client)', async () => {
    op.accounts.set('grace-1', { email: 'grace@corp.example', email_verified: true, groups: [] });
    const started = await startSignIn(service.app, { provider_id: providerId });
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'grace-1');
    expect((await callback(back, started.flow_token)).status).toBe(201);
    const again = await startSignIn(service.app, { provider_id: providerId });
    const replay = new URL(back);
    replay.searchParams.set('state', new URL(again.authorization_url).searchParams.get('state')!);
    const res = await callback(replay, again.flow_token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('oidc_code_rejected');
  });

  it('attack: an unverified e-mail at the real provider is not linked to the account that has it', async () => {
    await createUser(database.db, { email: 'boss@corp.example' });
    op.accounts.set('mallory-1', { email: 'boss@corp.example', email_verified: false });
    const started = await startSignIn(service.app, { provider_id: providerId });
    const back = await signInAt(started.authorization_url, REDIRECT_URI, 'mallory-1');
    const res = await callback(back, started.flow_token);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('oidc_email_unverified');
  });
});
