// Security notices: a change on a person's account (the password, a second factor, their roles, the
// account disabled, an API key made in their name) writes a message to them in the same transaction,
// in their language, sent through the outbox; the person reads their own at GET /me/notices, and
// nobody else's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, steppedUpInDatabase } from './support/second-factor.js';
import { makeRole } from './support/access-fixtures.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { ManualClock } from '../src/clock.js';
import { noticeFor } from '../src/mail/notices.js';

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
