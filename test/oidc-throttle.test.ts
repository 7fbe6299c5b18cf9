// The OIDC sign-in routes throttled per client address (docs/IDENTITY.md, "Throttled"), as an
// attacker tries it, on the real service and PostgreSQL, against a hand-made OpenID Provider on
// loopback. The throttle is the password sign-in's (src/auth/throttle/): each start and each callback
// from an address counts until a sign-in from it succeeds; past OIDC_MAX_FLOWS_PER_IP in the
// window, 429 rate_limited with Retry-After. Another address is not held back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { budget } from './support/budgets.js';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { expectContractResponse } from './support/contract.js';
import { addProvider, startHandMadeProvider, type HandMadeProvider } from './support/oidc.js';

const LIMIT = 4;
let database: TestDatabase;
let op: HandMadeProvider;
let service: ReturnType<typeof createTestApp>;
let providerId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  op = await startHandMadeProvider();
  // Client addresses from X-Forwarded-For, as behind the deployment's proxy.
  service = createTestApp(database.db, { env: { TRUST_PROXY: 'loopback', OIDC_MAX_FLOWS_PER_IP: String(LIMIT) } });
  const person = await createUser(database.db, { roles: ['admin'] });
  const token = (await signIn(service.app, person.email, person.password)).access_token;
  // Configuring identity providers needs a fresh proof (x-step-up).
  await steppedUpInDatabase(database.db, person.id);
  providerId = await addProvider(service.app, token, { name: 'Corp', issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: ['corp.example'], create_unknown_people: true });
}, budget({ passwordHash: 3 }));
afterAll(async () => {
  await op?.close();
  await database?.destroy();
});

const start = (ip: string) => request(service.app).post('/sessions/oidc').set('x-forwarded-for', ip).send({ provider_id: providerId });
const flows = async () => Number((await database.db.selectFrom('oidc_sign_in_flows').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

describe('OIDC sign-in throttled per client address', () => {
  it('a flood of starts from one address is throttled (429, Retry-After, no flow written, recorded); another address is not', async () => {
    const attacker = '198.51.100.7';
    for (let i = 0; i < LIMIT; i++) expect((await start(attacker)).status).toBe(201);
    const before = await flows();
    const refused = await start(attacker);
    expectContractResponse(refused, 'post', '/sessions/oidc');
    expect(refused.status, refused.text).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.retry_after).toBe(Number(refused.headers['retry-after']));
    expect(await flows()).toBe(before);
    const recorded = await database.db.selectFrom('security_events').select(['details']).where('type', '=', 'sign_in_throttled').where('ip_address', '=', attacker).execute();
    expect(recorded.map((e) => e.details)).toContainEqual(expect.objectContaining({ method: 'oidc', step: 'start' }));

    // Someone else, from another address, starts at once.
    expect((await start('203.0.113.9')).status).toBe(201);
  });

  it('a flood of forged callbacks (random state) from one address is throttled before any flow is taken', async () => {
    const attacker = '198.51.100.8';
    const callback = (state: string) => request(service.app).post('/sessions/oidc/callback').set('x-forwarded-for', attacker).send({ state, code: 'c', flow_token: 'bof_x' });
    for (let i = 0; i < LIMIT; i++) expect((await callback(`guess-${i}`)).status).toBe(401);
    const refused = await callback('guess-last');
    expectContractResponse(refused, 'post', '/sessions/oidc/callback');
    expect(refused.status, refused.text).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('password sign-ins with a chosen e-mail (oidc-flows@<the office address>) from other addresses do not throttle the office\'s OIDC sign-in', async () => {
    const office = '192.0.2.60';
    // The OIDC count's key was once the digest of this very "e-mail": failures of it, from any
    // address, added to the account slowdown the office's flows were counted by.
    for (const from of ['203.0.113.21', '203.0.113.22']) {
      for (let i = 0; i < LIMIT; i++) {
        const res = await request(service.app).post('/sessions').set('x-forwarded-for', from).send({ session: { email: `oidc-flows@${office}`, password: 'wrong password' } });
        expect(res.status, res.text).toBe(401);
      }
    }
    const started = await start(office);
    expect(started.status, started.text).toBe(201);
  });

  it('a person who completes a sign-in from an address is not held back by their own earlier starts there', async () => {
    const office = '192.0.2.44';
    for (let round = 0; round < LIMIT + 2; round++) {
      const started = await start(office);
      expect(started.status, started.text).toBe(201);
      const back = op.authorize(started.body.authorization_url as string, { sub: 'grace-1', email: 'grace@corp.example', email_verified: true });
      const done = await request(service.app).post('/sessions/oidc/callback').set('x-forwarded-for', office).send({ ...back, flow_token: started.body.flow_token });
      expect(done.status, done.text).toBe(201);
    }
  });
});
