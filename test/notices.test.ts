// Security notices: a change on a person's account (the password, a second factor, their roles, the
// account disabled, an API key made in their name) and a sign-in from a device or browser not seen
// before for them write a message to them in the same transaction, in their language, sent through
// the outbox; the person reads their own at GET /me/notices, and nobody else's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, steppedUpInDatabase, totpCode } from './support/second-factor.js';
import { makeApiKey, makeRole } from './support/access-fixtures.js';
import { changedTables, digestTables, tableNames } from './support/table-digest.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { SoftAuthenticator } from './support/passkey.js';
import { addProvider, startHandMadeProvider, startSignIn } from './support/oidc.js';
import { budget } from './support/budgets.js';
import { ManualClock } from '../src/clock.js';
import { noticeFor } from '../src/mail/notices.js';
import { KNOWN_DEVICES_KEPT, recognisedDevice, sightDevice, userAgentFamily } from '../src/auth/sessions/devices.js';
import { openSession } from '../src/auth/sessions/repository.js';
import { digestToken, newTokenSet } from '../src/auth/sessions/tokens.js';
import { emailDigest } from '../src/auth/throttle/sign-in-throttle.js';
import { keyring, keyringOf, newSealingKeyLine } from '../src/auth/secrets/sealing-keys.js';
import { parseSealingKeys } from '../src/config.js';

let database: TestDatabase;
let smtp: TestSmtpServer;
let clock: ManualClock;
let app: ReturnType<typeof createTestApp>['app'];
let services: ReturnType<typeof createTestApp>['services'];

beforeAll(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  clock = new ManualClock(new Date());
  ({ app, services } = createTestApp(database.db, { clock, env: { SMTP_URL: smtp.url } }));
});
afterAll(async () => {
  await services.mail.sender?.stop();
  await smtp.close();
  await database.destroy();
});

async function notices(accessToken: string) {
  const res = await request(app).get('/me/notices').set({ authorization: `Bearer ${accessToken}` });
  expect(res.status, res.text).toBe(200);
  expectContractResponse(res, 'get', '/me/notices');
  return res.body.data as { kind: string; subject: string; text: string; language: string; sent_at: string | null }[];
}

describe('security notices', () => {
  it('changing one\'s password and adding then removing an authenticator app: each is a notice, mailed and listed', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password);
    await steppedUpInDatabase(database.db, person.id);
    const changed = await request(app).put('/me/password').set({ authorization: `Bearer ${tokens.access_token}` }).send({ current_password: person.password, new_password: 'a brand new sentence of mine' });
    expect(changed.status, changed.text).toBe(204);
    clock.advance(1000);
    await enrolTotp(app, tokens.access_token, clock, 'a brand new sentence of mine');
    await services.mail.sender!.drain();
    // Sent at once, so in any order.
    const mailed = smtp.to(person.email).map((m) => m.subject);
    expect(mailed.sort()).toEqual(['A second factor was added to your account', 'Your password was changed']);
    expect(smtp.to(person.email).find((m) => m.subject.startsWith('A second factor'))!.text).toContain('an authenticator app');
    const listed = await notices(tokens.access_token);
    expect(listed.map((n) => n.kind)).toEqual(['second_factor_added', 'password_changed']);
    expect(listed[0]!.sent_at).not.toBeNull();
  });

  it('an administrator changing a person\'s roles, then disabling them: notices to the person, in the language of their last link', async () => {
    const admin = await createUser(database.db, { roles: ['admin'] });
    const adminTokens = await signIn(app, admin.email, admin.password);
    await steppedUpInDatabase(database.db, admin.id);
    const support = await makeRole(database.db, ['tasks.list']);
    const person = await createUser(database.db);
    // The person asked for a recovery link in French once: French is their language.
    expect((await request(app).post('/password-resets').send({ email: person.email, language: 'fr' })).status).toBe(202);
    clock.advance(1000);
    const auth = { authorization: `Bearer ${adminTokens.access_token}` };
    const patched = await request(app).patch(`/users/${person.id}`).set(auth).send({ roles: [support.name] });
    expect(patched.status, patched.text).toBe(200);
    clock.advance(1000);
    // A change that leaves the roles as they were tells nothing.
    expect((await request(app).patch(`/users/${person.id}`).set(auth).send({ last_name: 'Renamed' })).status).toBe(200);
    clock.advance(1000);
    const disabled = await request(app).delete(`/users/${person.id}`).set(auth);
    expect(disabled.status, disabled.text).toBe(200);
    await services.mail.sender!.drain();
    const mailed = smtp.to(person.email).map((m) => `${m.language}: ${m.subject}`);
    expect(mailed.sort()).toEqual(['fr: Choisissez un nouveau mot de passe', 'fr: Vos rôles ont changé', 'fr: Votre compte a été désactivé']);
    expect(smtp.to(person.email).find((m) => m.subject === 'Vos rôles ont changé')!.text).toContain(support.name);
  });

  it('an API key created in one\'s name is a notice to its creator', async () => {
    const person = await createUser(database.db, { permissions: ['api_keys.manage', 'tasks.list'] });
    const tokens = await signIn(app, person.email, person.password);
    await steppedUpInDatabase(database.db, person.id);
    const made = await request(app).post('/api-keys').set({ authorization: `Bearer ${tokens.access_token}` }).send({ name: 'Nightly export', permissions: ['tasks.list'] });
    expect(made.status, made.text).toBe(201);
    const listed = await notices(tokens.access_token);
    expect(listed[0]).toMatchObject({ kind: 'api_key_created', subject: 'An API key was created in your name' });
    expect(listed[0]!.text).toContain('"Nightly export"');
    // No secret in the notice.
    expect(listed[0]!.text).not.toContain(made.body.secret);
  });

  it('security: a person reads their own notices only; an API key has none to read', async () => {
    const one = await createUser(database.db);
    const other = await createUser(database.db);
    const oneTokens = await signIn(app, one.email, one.password);
    await steppedUpInDatabase(database.db, one.id);
    await request(app).put('/me/password').set({ authorization: `Bearer ${oneTokens.access_token}` }).send({ current_password: one.password, new_password: 'one more long sentence here' });
    const otherTokens = await signIn(app, other.email, other.password);
    expect(await notices(otherTokens.access_token)).toEqual([]);
    expect((await request(app).get('/me/notices')).status).toBe(401);
  });

  it('events that tell the person nothing new are no notices', () => {
    const at = new Date();
    expect(noticeFor({ type: 'sign_in_failed', at, userId: 'x' })).toBeUndefined();
    expect(noticeFor({ type: 'user_updated', at, userId: 'x', changes: { before: { last_name: 'A' }, after: { last_name: 'B' } } })).toBeUndefined();
    expect(noticeFor({ type: 'user_updated', at, userId: 'x', changes: { before: { roles: ['a', 'b'] }, after: { roles: ['b', 'a'] } } })).toBeUndefined();
  });
});

const FIREFOX_LINUX = 'Mozilla/5.0 (X11; Linux x86_64; rv:132.0) Gecko/20100101 Firefox/132.0';
const FIREFOX_LINUX_UPDATED = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHROME_WINDOWS = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.6 Mobile/15E148 Safari/604.1';

/** The new-device notices written to the person, oldest first. */
const newDeviceNotices = (userId: string) =>
  database.db.selectFrom('messages').select(['language', 'subject', 'body', 'html', 'recipient']).where('user_id', '=', userId).where('kind', '=', 'new_device_sign_in').orderBy('created_at').orderBy('id').execute();

const knownDevices = async (userId: string) => (await database.db.selectFrom('users').select(['known_devices', 'known_devices_key_id']).where('id', '=', userId).executeTakeFirstOrThrow());

/** The address the service saw for the person's newest session (the notice names it). */
const lastAddress = async (userId: string) =>
  (await database.db.selectFrom('sessions').select('ip_address').where('user_id', '=', userId).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow()).ip_address;

describe('a sign-in from a new device or browser', { timeout: budget({ passwordHash: 8 }) }, () => {
  it('the first sign-in only remembers the browser; the same browser again (updated too) tells nothing; another browser is one notice, mailed and listed', async () => {
    const person = await createUser(database.db);
    const first = await signIn(app, person.email, person.password, FIREFOX_LINUX);
    expect(await newDeviceNotices(person.id)).toEqual([]);
    expect((await knownDevices(person.id)).known_devices).toHaveLength(1);
    clock.advance(1000);
    await signIn(app, person.email, person.password, FIREFOX_LINUX);
    await signIn(app, person.email, person.password, FIREFOX_LINUX_UPDATED);
    expect(await newDeviceNotices(person.id)).toEqual([]);

    clock.advance(1000);
    await signIn(app, person.email, person.password, CHROME_WINDOWS);
    const written = await newDeviceNotices(person.id);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({ recipient: person.email, language: 'en', subject: 'A sign-in from a new device or browser' });
    expect(written[0]!.body).toContain('Chrome on Windows');
    expect(written[0]!.body).toContain(`from the address ${await lastAddress(person.id)}`);
    expect(written[0]!.html).toMatch(/^<!doctype html>/);
    clock.advance(1000);
    await signIn(app, person.email, person.password, CHROME_WINDOWS);
    expect(await newDeviceNotices(person.id)).toHaveLength(1);

    const listed = await notices(first.access_token);
    expect(listed.map((n) => n.kind)).toEqual(['new_device_sign_in']);
    expect(listed[0]).toMatchObject({ subject: 'A sign-in from a new device or browser', language: 'en' });
    await services.mail.sender!.drain();
    const mailed = smtp.to(person.email);
    expect(mailed.map((m) => m.subject)).toEqual(['A sign-in from a new device or browser']);
    expect(mailed[0]!.text).toContain('Chrome on Windows');
  });

  it('in the person\'s language: French after a French recovery link', async () => {
    const person = await createUser(database.db);
    await signIn(app, person.email, person.password, FIREFOX_LINUX);
    expect((await request(app).post('/password-resets').send({ email: person.email, language: 'fr' })).status).toBe(202);
    clock.advance(1000);
    await signIn(app, person.email, person.password, SAFARI_IPHONE);
    const [written] = await newDeviceNotices(person.id);
    expect(written).toMatchObject({ language: 'fr', subject: 'Une connexion depuis un nouvel appareil ou navigateur' });
    expect(written!.body).toContain('Safari sous iOS');
    expect(written!.html).toContain('lang="fr"');
  });

  it('nothing is written when the sign-in fails, and a failed attempt does not make the browser known', async () => {
    const person = await createUser(database.db);
    await signIn(app, person.email, person.password, FIREFOX_LINUX);
    const before = await knownDevices(person.id);
    const wrong = await request(app).post('/sessions').set('user-agent', CHROME_WINDOWS).send({ session: { email: person.email, password: 'not the password at all' } });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await newDeviceNotices(person.id)).toEqual([]);
    expect(await knownDevices(person.id)).toEqual(before);
    clock.advance(1000);
    await signIn(app, person.email, person.password, CHROME_WINDOWS);
    expect(await newDeviceNotices(person.id)).toHaveLength(1);
  });

  it('with a second factor: the password step alone (a challenge) tells nothing, the completed sign-in does', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password, FIREFOX_LINUX);
    await steppedUpInDatabase(database.db, person.id);
    const { secret } = await enrolTotp(app, tokens.access_token, clock, person.password);
    const withCode = async (userAgent: string) => {
      const challenged = await request(app).post('/sessions').set('user-agent', userAgent).send({ session: { email: person.email, password: person.password } });
      expect(challenged.status).toBe(202);
      expect(await newDeviceNotices(person.id)).toHaveLength(told);
      clock.advance(30_000);
      const res = await request(app).post('/sessions/second-factor').set('user-agent', userAgent).send({ challenge_token: challenged.body.second_factor.challenge_token, totp_code: totpCode(secret, clock.now()) });
      expect(res.status, res.text).toBe(201);
    };
    let told = 0;
    await withCode(CHROME_WINDOWS);
    expect(await newDeviceNotices(person.id)).toHaveLength((told = 1));
    await withCode(CHROME_WINDOWS);
    await withCode(FIREFOX_LINUX);
    expect(await newDeviceNotices(person.id)).toHaveLength(1);
  });

  it('a passkey alone, and an identity provider, open sessions the same way: a new browser is told', async () => {
    // A passkey, signing in without a password from a browser the person never used.
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password, FIREFOX_LINUX);
    await steppedUpInDatabase(database.db, person.id);
    const authenticator = new SoftAuthenticator();
    const started = await request(app).post('/me/passkeys/registration').set({ authorization: `Bearer ${tokens.access_token}` });
    expect(started.status, started.text).toBe(201);
    const registered = await request(app).post('/me/passkeys').set({ authorization: `Bearer ${tokens.access_token}` }).send({ name: 'Phone', credential: authenticator.register(started.body.options) });
    expect(registered.status, registered.text).toBe(201);
    const challenge = await request(app).post('/sessions/passkey/challenge');
    const passwordless = await request(app).post('/sessions/passkey').set('user-agent', SAFARI_IPHONE).send({ credential: authenticator.assert(challenge.body.options.challenge) });
    expect(passwordless.status, passwordless.text).toBe(201);
    expect((await newDeviceNotices(person.id)).map((n) => n.body.includes('Safari on iOS'))).toEqual([true]);

    // A company's identity provider: the person's first sign-in there starts their list, a second
    // browser is told.
    const provider = await startHandMadeProvider();
    try {
      const admin = await createUser(database.db, { roles: ['admin'] });
      const adminTokens = await signIn(app, admin.email, admin.password);
      await steppedUpInDatabase(database.db, admin.id);
      const providerId = await addProvider(app, adminTokens.access_token, { name: 'Notice Corp', issuer: provider.issuer, client_id: provider.clientId, client_secret: provider.clientSecret, domains: ['notice-corp.example'], create_unknown_people: true });
      const email = `grace.${Date.now()}@notice-corp.example`;
      const atProvider = async (userAgent: string) => {
        const flow = await startSignIn(app, { provider_id: providerId });
        const back = provider.authorize(flow.authorization_url, { sub: `notice-${email}`, email, email_verified: true, given_name: 'Grace', family_name: 'Hopper' });
        const res = await request(app).post('/sessions/oidc/callback').set('user-agent', userAgent).send({ ...back, flow_token: flow.flow_token });
        expect(res.status, res.text).toBe(201);
      };
      await atProvider(FIREFOX_LINUX);
      const grace = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
      expect(await newDeviceNotices(grace.id)).toEqual([]);
      await atProvider(CHROME_WINDOWS);
      expect(await newDeviceNotices(grace.id)).toHaveLength(1);
    } finally {
      await provider.close();
    }
  });

  it('accepting an invitation signs in on the person\'s first device: known from then on, in the invitation\'s language', async () => {
    const admin = await createUser(database.db, { permissions: ['invitations.manage', 'users.create'] });
    const adminTokens = await signIn(app, admin.email, admin.password);
    await steppedUpInDatabase(database.db, admin.id);
    const email = `invitee-${Date.now()}@example.com`;
    const invited = await request(app).post('/invitations').set({ authorization: `Bearer ${adminTokens.access_token}` }).send({ email, language: 'fr' });
    expect(invited.status, invited.text).toBe(201);
    const message = await database.db.selectFrom('messages').select('body').where('recipient', '=', email).executeTakeFirstOrThrow();
    const token = decodeURIComponent(/#\/invitation\?token=(boi_[0-9A-Za-z_]+)/.exec(message.body)![1]!);
    const password = 'a password of my own choosing';
    const accepted = await request(app).post('/invitations/accept').set('user-agent', FIREFOX_LINUX).send({ token, first_name: 'Grace', last_name: 'Hopper', password });
    expect(accepted.status, accepted.text).toBe(201);
    const { id } = await database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow();
    await signIn(app, email, password, FIREFOX_LINUX_UPDATED);
    expect(await newDeviceNotices(id)).toEqual([]);
    await signIn(app, email, password, CHROME_WINDOWS);
    expect((await newDeviceNotices(id)).map((n) => n.language)).toEqual(['fr']);
  });

  it('two sign-ins racing from one new browser write one notice', async () => {
    const person = await createUser(database.db);
    await signIn(app, person.email, person.password, FIREFOX_LINUX);
    await Promise.all([signIn(app, person.email, person.password, CHROME_WINDOWS), signIn(app, person.email, person.password, CHROME_WINDOWS)]);
    expect(await newDeviceNotices(person.id)).toHaveLength(1);
  });

  it(`a person's row remembers the ${KNOWN_DEVICES_KEPT} most recently used devices; one pushed out is new again; a list of another sealing key is started again silently`, async () => {
    const person = await createUser(database.db);
    const keys = keyringOf(testConfig());
    const open = (userAgent: string, ring = keys) => {
      const set = newTokenSet();
      const now = clock.now();
      return openSession(database.db, {
        userId: person.id, ip: '198.51.100.7', countedAddress: '198.51.100.7', userAgent, now, expiresAt: new Date(now.getTime() + 3_600_000),
        accessDigest: digestToken(set.access_token), refreshDigest: digestToken(set.refresh_token), emailDigest: emailDigest(person.email),
        device: sightDevice(ring, { ip: '198.51.100.7', userAgent }, now),
      });
    };
    const browser = (n: number) => `TestBrowser${'x'.repeat(n)}/1.0`;
    for (let n = 0; n <= KNOWN_DEVICES_KEPT; n++) await open(browser(n));
    expect(await newDeviceNotices(person.id)).toHaveLength(KNOWN_DEVICES_KEPT);
    expect((await knownDevices(person.id)).known_devices).toHaveLength(KNOWN_DEVICES_KEPT);
    // The most recent ones are known; the first was pushed out by the eleventh.
    await open(browser(KNOWN_DEVICES_KEPT));
    expect(await newDeviceNotices(person.id)).toHaveLength(KNOWN_DEVICES_KEPT);
    await open(browser(0));
    expect(await newDeviceNotices(person.id)).toHaveLength(KNOWN_DEVICES_KEPT + 1);
    // The operator rotated the sealing key: the digests cannot be compared, the list starts again, nobody is told.
    const rotated = keyring([...parseSealingKeys(newSealingKeyLine('rotated'), 'test'), ...testConfig().sealingKeys!]);
    await open(browser(5), rotated);
    expect(await newDeviceNotices(person.id)).toHaveLength(KNOWN_DEVICES_KEPT + 1);
    expect(await knownDevices(person.id)).toMatchObject({ known_devices: [expect.any(Buffer)], known_devices_key_id: 'rotated' });
    await open(browser(6), rotated);
    expect(await newDeviceNotices(person.id)).toHaveLength(KNOWN_DEVICES_KEPT + 2);
  });

  it('a device is the user agent without its versions; its name in a notice comes from a closed list', () => {
    expect(userAgentFamily(FIREFOX_LINUX)).toBe(userAgentFamily(FIREFOX_LINUX_UPDATED));
    expect(userAgentFamily(FIREFOX_LINUX)).not.toBe(userAgentFamily(FIREFOX_LINUX.replace('Linux', 'Windows')));
    expect(userAgentFamily(CHROME_WINDOWS)).not.toBe(userAgentFamily(CHROME_WINDOWS.replace('Chrome/', 'Edg/')));
    expect(recognisedDevice(FIREFOX_LINUX)).toEqual({ browser: 'Firefox', system: 'Linux' });
    expect(recognisedDevice(CHROME_WINDOWS)).toEqual({ browser: 'Chrome', system: 'Windows' });
    expect(recognisedDevice(`${CHROME_WINDOWS} Edg/131.0.0.0`)).toEqual({ browser: 'Edge', system: 'Windows' });
    expect(recognisedDevice(SAFARI_IPHONE)).toEqual({ browser: 'Safari', system: 'iOS' });
    expect(recognisedDevice('curl/8.5.0')).toEqual({ browser: null, system: null });
  });
});

describe('security: a sign-in from a new device or browser', { timeout: budget({ passwordHash: 4 }) }, () => {
  it('an attacker who stole the password signs in from their own browser: the owner is told, in their mailbox and on their notices', async () => {
    const owner = await createUser(database.db);
    const own = await signIn(app, owner.email, owner.password, FIREFOX_LINUX);
    clock.advance(60_000);
    // The attacker's browser, whose user agent carries words meant for the owner's eyes.
    const attackerAgent = `${CHROME_WINDOWS} URGENT: your account is locked, confirm at https://evil.example/login`;
    const stolen = await request(app).post('/sessions').set('user-agent', attackerAgent).send({ session: { email: owner.email, password: owner.password } });
    expect(stolen.status).toBe(201);
    const [told] = await newDeviceNotices(owner.id);
    expect(told!.body).toContain('Chrome on Windows');
    expect(told!.body).toContain(await lastAddress(owner.id));
    // What the attacker wrote in their user agent never reaches the owner.
    for (const part of [told!.body, told!.html, told!.subject]) expect(part).not.toMatch(/evil\.example|URGENT/);
    const listed = await notices(own.access_token);
    expect(listed[0]).toMatchObject({ kind: 'new_device_sign_in', subject: 'A sign-in from a new device or browser' });
    await services.mail.sender!.drain();
    expect(smtp.to(owner.email).map((m) => m.subject)).toContain('A sign-in from a new device or browser');
  });

  it('an attacker who signs in before the owner ever did is their first device: the owner is told when they sign in from their own', async () => {
    const owner = await createUser(database.db);
    await signIn(app, owner.email, owner.password, CHROME_WINDOWS);
    expect(await newDeviceNotices(owner.id)).toEqual([]);
    clock.advance(60_000);
    const own = await signIn(app, owner.email, owner.password, FIREFOX_LINUX);
    expect(await newDeviceNotices(owner.id)).toHaveLength(1);
    expect((await notices(own.access_token))[0]!.kind).toBe('new_device_sign_in');
  });
});

describe('my language for the messages (PATCH /me)', { timeout: budget({ passwordHash: 4 }) }, () => {
  const patchMe = (accessToken: string, body: unknown) => request(app).patch('/me').set({ authorization: `Bearer ${accessToken}` }).send(body as object);
  const me = async (accessToken: string) => {
    const res = await request(app).get('/me').set({ authorization: `Bearer ${accessToken}` });
    expect(res.status, res.text).toBe(200);
    expectContractResponse(res, 'get', '/me');
    return res.body as { language: string | null; user: { id: string } };
  };

  it('set through the API, it is the language of the next notice, ahead of the last link\'s; null goes back to that; the same value again records nothing', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password, FIREFOX_LINUX);
    expect((await me(tokens.access_token)).language).toBeNull();
    // A French recovery link once: French is their language while they have none of their own.
    expect((await request(app).post('/password-resets').send({ email: person.email, language: 'fr' })).status).toBe(202);

    const set = await patchMe(tokens.access_token, { language: 'en' });
    expect(set.status, set.text).toBe(200);
    expectContractResponse(set, 'patch', '/me');
    expect(set.body).toMatchObject({ language: 'en', user: { id: person.id } });
    expect((await me(tokens.access_token)).language).toBe('en');
    clock.advance(1000);
    await signIn(app, person.email, person.password, CHROME_WINDOWS);
    expect((await newDeviceNotices(person.id)).map((n) => n.language)).toEqual(['en']);

    expect((await patchMe(tokens.access_token, { language: 'fr' })).status).toBe(200);
    await steppedUpInDatabase(database.db, person.id);
    clock.advance(1000); // the notices are listed newest first: not at the same instant as the sign-in's
    const changed = await request(app).put('/me/password').set({ authorization: `Bearer ${tokens.access_token}` }).send({ current_password: person.password, new_password: 'a brand new sentence of mine' });
    expect(changed.status, changed.text).toBe(204);
    const listed = await notices(tokens.access_token);
    expect(listed[0]).toMatchObject({ kind: 'password_changed', language: 'fr', subject: 'Votre mot de passe a changé' });

    // Back to the default: the last link's (French), whatever the setting was.
    const reset = await patchMe(tokens.access_token, { language: null });
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body.language).toBeNull();

    // Recorded once per change, as the person's own change of their account.
    const recorded = await database.db.selectFrom('security_events').select(['actor_id', 'target_id', 'changes']).where('type', '=', 'user_updated').where('user_id', '=', person.id).orderBy('id').execute();
    expect(recorded.map((e) => e.changes)).toEqual([
      { before: { language: null }, after: { language: 'en' } },
      { before: { language: 'en' }, after: { language: 'fr' } },
      { before: { language: 'fr' }, after: { language: null } },
    ]);
    expect(recorded.every((e) => e.actor_id === person.id && e.target_id === person.id)).toBe(true);
    expect((await patchMe(tokens.access_token, { language: null })).status).toBe(200);
    expect(await database.db.selectFrom('security_events').select('id').where('type', '=', 'user_updated').where('user_id', '=', person.id).execute()).toHaveLength(3);
  });

  it('a value outside the list, or no setting at all, is 400 problem+json and changes nothing', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password);
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    for (const body of [{ language: 'de' }, { language: 'FR' }, { language: 7 }, {}, { language: 'fr', theme: 'dark' }]) {
      const res = await patchMe(tokens.access_token, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('validation_failed');
      expectContractResponse(res, 'patch', '/me');
    }
    expect(changedTables(before, await digestTables(database.db, tables))).toEqual([]);
    expect((await me(tokens.access_token)).language).toBeNull();
  });
});

describe('security: my language for the messages', { timeout: budget({ passwordHash: 3 }) }, () => {
  it('a person tries to set another person\'s language: /me names nobody else, and the user resource does not take it', async () => {
    const attacker = await createUser(database.db, { permissions: ['users.list', 'users.read', 'users.update'] });
    const victim = await createUser(database.db);
    const tokens = await signIn(app, attacker.email, attacker.password);
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    for (const body of [{ language: 'fr', user_id: victim.id }, { language: 'fr', user: { id: victim.id } }, { language: 'fr', id: victim.id }]) {
      const res = await request(app).patch('/me').set(auth).send(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    // Nor may a query name someone: the operation has no parameter for it.
    const byQuery = await request(app).patch(`/me?user_id=${victim.id}`).set(auth).send({ language: 'fr' });
    expect(byQuery.status).toBe(400);
    expect(byQuery.headers['content-type']).toMatch(/^application\/problem\+json/);
    const viaUsers = await request(app).patch(`/users/${victim.id}`).set(auth).send({ language: 'fr' });
    expect(viaUsers.status).toBe(400);
    expect(viaUsers.headers['content-type']).toMatch(/^application\/problem\+json/);
    const languages = await database.db.selectFrom('users').select(['id', 'language']).where('id', 'in', [victim.id, attacker.id]).execute();
    expect(languages.map((u) => u.language)).toEqual([null, null]);
    // What /me changes is the caller's own.
    expect((await request(app).patch('/me').set(auth).send({ language: 'fr' })).status).toBe(200);
    expect((await database.db.selectFrom('users').select('language').where('id', '=', victim.id).executeTakeFirstOrThrow()).language).toBeNull();
    expect((await database.db.selectFrom('users').select('language').where('id', '=', attacker.id).executeTakeFirstOrThrow()).language).toBe('fr');
  });

  it('changing it leaves the person as others see them, and the forms open on them, as they were: their ETag does not move', async () => {
    const person = await createUser(database.db);
    const admin = await createUser(database.db, { permissions: ['users.read', 'users.update'] });
    const adminTokens = await signIn(app, admin.email, admin.password, FIREFOX_LINUX);
    const tokens = await signIn(app, person.email, person.password, FIREFOX_LINUX);
    const read = await request(app).get(`/users/${person.id}`).set({ authorization: `Bearer ${adminTokens.access_token}` });
    expect(read.status, read.text).toBe(200);
    expect((await request(app).patch('/me').set({ authorization: `Bearer ${tokens.access_token}` }).send({ language: 'fr' })).status).toBe(200);
    const again = await request(app).get(`/users/${person.id}`).set({ authorization: `Bearer ${adminTokens.access_token}` });
    expect(again.headers.etag).toBe(read.headers.etag);
    // The administrator's form, opened before, still saves.
    const saved = await request(app).patch(`/users/${person.id}`).set({ authorization: `Bearer ${adminTokens.access_token}`, 'if-match': read.headers.etag }).send({ first_name: 'Renamed' });
    expect(saved.status, saved.text).toBe(200);
  });

  it('an API key is nobody: it has no language to set (401)', async () => {
    const key = await makeApiKey(database.db, ['users.update']);
    const res = await request(app).patch('/me').set('x-api-key', key.secret).send({ language: 'fr' });
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });
});
