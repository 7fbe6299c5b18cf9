// Password recovery (docs/MAIL.md): "Forgot your password?" over HTTP, the link read from what a
// real SMTP server on loopback received, followed to set a new password; an administrator sending
// a link. And the attacks, named as the attacker tries them: telling which addresses have an
// account by the answer or by the work done, reusing a spent link, a link after a password change,
// someone else's link, flooding the requests, recovering an account whose company signs it in,
// signing in with the old password while the reset commits. And the reset racing the changes that
// lock the person first (an erasure, an address change): one lock order, no deadlock.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../src/db/schema.js';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { enrolTotp, passwordStep, secondStep, steppedUp, steppedUpInDatabase, totpCode } from './support/second-factor.js';
import { makeApiKey, makeIdentityProvider } from './support/access-fixtures.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { digestTables, tableNames } from './support/table-digest.js';
import { ManualClock } from '../src/clock.js';
import { runFixedStatementsOnPool } from '../src/db/fixed-statement.js';
import { maintain } from '../src/maintenance/sweeper.js';
import { emailDigest, throttledAddress } from '../src/auth/throttle/sign-in-throttle.js';

let database: TestDatabase;
let smtp: TestSmtpServer;
let clock: ManualClock;
let app: ReturnType<typeof createTestApp>['app'];
let services: ReturnType<typeof createTestApp>['services'];

const NEW_PASSWORD = 'a long and private sentence of mine';

beforeAll(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer();
  clock = new ManualClock(new Date());
  ({ app, services } = createTestApp(database.db, { clock, env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true', PASSWORD_RESET_MAX_PER_ADDRESS: '3', PASSWORD_RESET_MAX_PER_IP: '1000' } }));
});
afterAll(async () => {
  await services.mail.sender?.stop();
  await smtp.close();
  await database.destroy();
});

/** Each test from its own client address, so that the throttle's counts are its own. */
let nextIp = 1;
const freshIp = () => `198.51.100.${nextIp++}`;

async function post(path: string, body: object, ip: string, headers: Record<string, string> = {}) {
  const res = await request(app).post(path).set({ 'x-forwarded-for': ip, ...headers }).send(body);
  expectContractResponse(res, 'post', path);
  return res;
}

/** Asks for a link from `ip` and sends what is due; the messages the SMTP server got for `email`. */
async function askAndDeliver(email: string, ip = freshIp(), language?: 'en' | 'fr') {
  const res = await post('/password-resets', { email, ...(language ? { language } : {}) }, ip);
  expect(res.status, res.text).toBe(202);
  await services.mail.sender!.drain();
  // The recovery links only (a notice may have come in between), oldest first.
  return smtp.to(email).filter((m) => m.text.includes('/#/password-reset?token='));
}

/** The token of the newest recovery link delivered to `email`, from its plain-text part. */
function tokenIn(text: string): string {
  const match = /http:\/\/localhost:3000\/#\/password-reset\?token=(bop_[0-9A-Za-z_]+)/.exec(text);
  expect(match, text).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

const confirm = (token: string, new_password = NEW_PASSWORD, ip = freshIp()) => post('/password-resets/confirm', { token, new_password }, ip);

/**
 * Only to order two requests deterministically: another connection runs `lock` and keeps its
 * transaction open until `release` is called.
 */
async function holdLock(lock: (trx: Kysely<Database>) => Promise<unknown>) {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let locked!: () => void;
  const isLocked = new Promise<void>((resolve) => (locked = resolve));
  const done = database.db.transaction().execute(async (trx) => {
    await lock(trx);
    locked();
    await held;
  });
  await isLocked;
  return async () => {
    release();
    await done;
  };
}

/** How many of this database's connections wait for a lock. */
const waitingForLocks = async () =>
  (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(database.db)).rows[0]!.n;

describe('the flow, through a real SMTP server', () => {
  it('forgot password: the link arrives in plain text and HTML, in French; the new password works, the old one and every session end; no sign-in', async () => {
    const person = await createUser(database.db);
    const before = await signIn(app, person.email, person.password);
    const [mail] = await askAndDeliver(person.email, freshIp(), 'fr');
    expect(mail).toBeDefined();
    expect(mail!.subject).toBe('Choisissez un nouveau mot de passe');
    expect(mail!.language).toBe('fr');
    const token = tokenIn(mail!.text);
    expect(mail!.html).toContain(`href="http://localhost:3000/#/password-reset?token=${token}"`);
    const done = await confirm(token);
    expect(done.status, done.text).toBe(204);
    expect(done.text).toBe('');
    // Every session ended; the old password refused; the new one signs in.
    expect((await request(app).get('/me').set({ authorization: `Bearer ${before.access_token}` })).status).toBe(401);
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).not.toBe(201);
    const after = await signIn(app, person.email, NEW_PASSWORD);
    expect((await request(app).get('/me').set({ authorization: `Bearer ${after.access_token}` })).status).toBe(200);
    // Told, in the language of the link.
    await services.mail.sender!.drain();
    const notices = smtp.to(person.email);
    expect(notices.at(-1)!.subject).toBe('Votre mot de passe a changé');
    // Recorded.
    const events = await database.db.selectFrom('security_events').select(['type', 'details']).where('user_id', '=', person.id).where('type', 'like', 'password_reset%').orderBy('occurred_at').execute();
    expect(events.map((e) => e.type)).toEqual(['password_reset_requested', 'password_reset_completed']);
    expect(events[1]!.details).toMatchObject({ sessions_revoked: 1 });
  });

  it('a person with a second factor still needs it at the next sign-in', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password);
    await enrolTotp(app, tokens.access_token, clock, person.password);
    const [mail] = await askAndDeliver(person.email);
    expect((await confirm(tokenIn(mail!.text))).status).toBe(204);
    const signedIn = await request(app).post('/sessions').send({ session: { email: person.email, password: NEW_PASSWORD } });
    expect(signedIn.status).toBe(202);
    expect(signedIn.body.second_factor.methods).toContain('totp');
    expect(signedIn.body.access_token).toBeUndefined();
  });

  it('an administrator sends a person a link (never seeing it), within their rights; the person sets the password', async () => {
    const admin = await createUser(database.db, { permissions: ['users.update'] });
    const adminTokens = await signIn(app, admin.email, admin.password);
    const person = await createUser(database.db);
    const sent = await post(`/users/${person.id.toUpperCase()}/password-reset`, { language: 'en' }, freshIp(), { authorization: `Bearer ${adminTokens.access_token}` });
    expect(sent.status, sent.text).toBe(202);
    expect(sent.text).toBe('');
    await services.mail.sender!.drain();
    const [mail] = smtp.to(person.email);
    expect(mail!.text).toContain('An administrator sent you this link');
    expect((await confirm(tokenIn(mail!.text))).status).toBe(204);
    await signIn(app, person.email, NEW_PASSWORD);
    // The French path, by an API key holding users.update.
    const key = await makeApiKey(database.db, ['users.update']);
    const byKey = await request(app).post(`/utilisateurs/${person.id}/reinitialisation-mot-de-passe`).set({ 'x-api-key': key.secret }).send({});
    expect(byKey.status, byKey.text).toBe(202);
  });

  it('the French paths ask and confirm as the English ones', async () => {
    const person = await createUser(database.db);
    const asked = await request(app).post('/reinitialisations-mot-de-passe').set({ 'x-forwarded-for': freshIp() }).send({ email: person.email });
    expect(asked.status).toBe(202);
    await services.mail.sender!.drain();
    const token = tokenIn(smtp.to(person.email)[0]!.text);
    const done = await request(app).post('/reinitialisations-mot-de-passe/confirmation').send({ token, new_password: NEW_PASSWORD });
    expect(done.status, done.text).toBe(204);
  });
});

describe('errors', () => {
  it('a password the rules refuse is 400 password_rejected and changes nothing; the link still works', async () => {
    const person = await createUser(database.db);
    const [mail] = await askAndDeliver(person.email);
    const token = tokenIn(mail!.text);
    const before = await digestTables(database.db, await tableNames(database.db));
    const refused = await confirm(token, 'short');
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('password_rejected');
    expect(await digestTables(database.db, await tableNames(database.db))).toEqual(before);
    expect((await confirm(token)).status).toBe(204);
  });

  it('bad input is a clear problem: no e-mail, an unknown field', async () => {
    const ip = freshIp();
    expect((await post('/password-resets', {}, ip)).body.code).toBe('validation_failed');
    expect((await post('/password-resets', { email: 'a@example.com', admin: true }, ip)).status).toBe(400);
    expect((await post('/password-resets/confirm', { token: 'bop_x' }, ip)).body.code).toBe('validation_failed');
  });

  it('an administrator: an unknown id is 404; a disabled person 409; a person outranking them 403', async () => {
    const lesser = await createUser(database.db, { permissions: ['users.update'] });
    const tokens = await signIn(app, lesser.email, lesser.password);
    const auth = { authorization: `Bearer ${tokens.access_token}` };
    expect((await post(`/users/${randomUUID()}/password-reset`, {}, freshIp(), auth)).status).toBe(404);
    const admin = await createUser(database.db, { roles: ['admin'] });
    const outranked = await post(`/users/${admin.id}/password-reset`, {}, freshIp(), auth);
    expect(outranked.status).toBe(403);
    expect(outranked.body.code).toBe('target_outranks_caller');
    const disabled = await createUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    expect((await post(`/users/${disabled.id}/password-reset`, {}, freshIp(), auth)).status).toBe(409);
    const nobody = await post(`/users/${disabled.id}/password-reset`, {}, freshIp());
    expect(nobody.status).toBe(401);
  });
});

describe('security: attacks on password recovery', () => {
  it('account enumeration by the answer: a known, an unknown, a disabled and an sso_required address get the same status, headers and body', async () => {
    const known = await createUser(database.db);
    const disabled = await createUser(database.db);
    await database.db.updateTable('users').set({ status: 'disabled' }).where('id', '=', disabled.id).execute();
    const domain = `sso-${randomUUID().slice(0, 6)}.example.com`;
    const provider = await makeIdentityProvider(database.db, `https://idp.${domain}`, [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    const sso = await createUser(database.db, { email: `someone@${domain}` });
    const answers = [];
    for (const email of [known.email, `nobody-${randomUUID().slice(0, 6)}@example.com`, disabled.email, sso.email]) {
      const res = await post('/password-resets', { email }, freshIp());
      const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
      answers.push({ status: res.status, body: res.text, headers });
    }
    for (const answer of answers.slice(1)) expect(answer).toEqual(answers[0]);
    expect(answers[0]!.status).toBe(202);
  });

  it('account enumeration by timing: the work done (every statement, in order) is the same for a known and an unknown address', async () => {
    const statements: string[] = [];
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: database.pool }), log: (event) => {
      statements.push(event.query.sql);
    } });
    runFixedStatementsOnPool(db, database.pool);
    const spied = createTestApp(db, { clock, env: { SMTP_URL: smtp.url, TRUST_PROXY: 'true' } });
    const known = await createUser(database.db);
    const work = async (email: string) => {
      statements.length = 0;
      const res = await request(spied.app).post('/password-resets').set({ 'x-forwarded-for': freshIp() }).send({ email });
      expect(res.status).toBe(202);
      return [...statements];
    };
    const forKnown = await work(known.email);
    const forUnknown = await work(`nobody-${randomUUID().slice(0, 6)}@example.com`);
    expect(forKnown.length).toBeGreaterThan(2);
    expect(forUnknown).toEqual(forKnown);
    // And only the known address got a link.
    expect(await database.db.selectFrom('password_resets').select('id').where('user_id', '=', known.id).execute()).toHaveLength(1);
  });

  it('reusing a spent link: the second use is 400 invalid_password_reset and the password stays the first one chosen', async () => {
    const person = await createUser(database.db);
    const [mail] = await askAndDeliver(person.email);
    const token = tokenIn(mail!.text);
    expect((await confirm(token)).status).toBe(204);
    const again = await confirm(token, 'the attacker chose this one');
    expect(again.status).toBe(400);
    expect(again.body.code).toBe('invalid_password_reset');
    await signIn(app, person.email, NEW_PASSWORD);
  });

  it('a link after a password change (and after another link was used) opens nothing', async () => {
    const person = await createUser(database.db);
    const [first, second] = [tokenIn((await askAndDeliver(person.email))[0]!.text), tokenIn((await askAndDeliver(person.email))[1]!.text)];
    // The person changes their password the usual way: every link they had is spent.
    const tokens = await signIn(app, person.email, person.password);
    await steppedUpInDatabase(database.db, person.id);
    const changed = await request(app).put('/me/password').set({ authorization: `Bearer ${tokens.access_token}` }).send({ current_password: person.password, new_password: 'my own new sentence, long enough' });
    expect(changed.status, changed.text).toBe(204);
    for (const token of [first, second]) expect((await confirm(token)).body.code).toBe('invalid_password_reset');
    // Using one link spends the others too.
    const [third, fourth] = [tokenIn((await askAndDeliver(person.email))[2]!.text), tokenIn((await askAndDeliver(person.email, freshIp()))[3]!.text)];
    expect((await confirm(fourth)).status).toBe(204);
    expect((await confirm(third)).body.code).toBe('invalid_password_reset');
  });

  it('an expired link (past 30 minutes) opens nothing, and the periodic sweep takes its message out of the outbox', async () => {
    const person = await createUser(database.db);
    const token = tokenIn((await askAndDeliver(person.email))[0]!.text);
    clock.advance(30 * 60_000 + 1);
    expect((await confirm(token)).body.code).toBe('invalid_password_reset');
    const carrying = () => database.db.selectFrom('messages').select('id').where('recipient', '=', person.email).where('kind', '=', 'password_reset').execute();
    expect(await carrying()).toHaveLength(1);
    const config = testConfig();
    const swept = await maintain(database.db, clock.now(), config.sweep.policy, config.sweep.auditRetentionS);
    expect(swept.deadLinkMessages).toBeGreaterThanOrEqual(1);
    expect(await carrying()).toEqual([]);
  });

  it("someone else's link: asking for the victim's address gives the attacker nothing, and the attacker's own link sets only their own password", async () => {
    const victim = await createUser(database.db);
    const attacker = await createUser(database.db);
    const asked = await post('/password-resets', { email: victim.email }, freshIp());
    expect(asked.text).toBe('');
    await services.mail.sender!.drain();
    const own = tokenIn(smtp.to(attacker.email).length ? smtp.to(attacker.email)[0]!.text : (await askAndDeliver(attacker.email))[0]!.text);
    expect((await confirm(own)).status).toBe(204);
    // The victim's password is untouched; a made-up token and a token of another kind open nothing.
    await signIn(app, victim.email, victim.password);
    expect((await confirm('bop_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA_000000')).body.code).toBe('invalid_password_reset');
    const invitationLike = tokenIn(smtp.to(victim.email)[0]!.text).replace(/^bop_/, 'boi_');
    expect((await confirm(invitationLike)).body.code).toBe('invalid_password_reset');
    // The link's token is stored nowhere but in the message: only its digest.
    const tokenBody = tokenIn(smtp.to(victim.email)[0]!.text).split('_')[1]!;
    const hits: string[] = [];
    for (const table of await tableNames(database.db)) {
      const { rows } = await sql<{ row: string }>`select t::text as row from ${sql.table(table)} t`.execute(database.db);
      if (rows.some(({ row }) => row.includes(tokenBody))) hits.push(table);
    }
    expect(hits).toEqual(['messages']);
  });

  it('flooding recovery requests: one address from one client is throttled (429 with Retry-After), known or not', async () => {
    const person = await createUser(database.db);
    for (const email of [person.email, `nobody-${randomUUID().slice(0, 6)}@example.com`]) {
      const ip = freshIp();
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await post('/password-resets', { email }, ip)).status);
      expect(statuses).toEqual([202, 202, 202, 429, 429]);
    }
    // From every client together, the address's requests are spaced out past twice the limit.
    for (let i = 0; i < 3; i++) expect((await post('/password-resets', { email: person.email }, freshIp())).status).toBe(202);
    const refused = await post('/password-resets', { email: person.email }, freshIp());
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await services.mail.sender!.drain();
    expect(smtp.to(person.email)).toHaveLength(6);
  });

  it('resetting an sso_required person: the same 202, no link, a message telling them to sign in with their provider', async () => {
    const domain = `corp-${randomUUID().slice(0, 6)}.example.com`;
    const provider = await makeIdentityProvider(database.db, `https://idp.${domain}`, [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    const person = await createUser(database.db, { email: `worker@${domain}` });
    expect(await askAndDeliver(person.email)).toEqual([]);
    const [mail] = smtp.to(person.email);
    expect(mail!.subject).toBe('How to sign in to the back office');
    expect(mail!.text).toContain(`idp ${provider}`);
    expect(mail!.text).not.toMatch(/bop_/);
    expect(await database.db.selectFrom('password_resets').select('id').where('user_id', '=', person.id).execute()).toHaveLength(0);
    // An administrator is told plainly.
    const admin = await createUser(database.db, { permissions: ['users.update'] });
    const tokens = await signIn(app, admin.email, admin.password);
    const sent = await post(`/users/${person.id}/password-reset`, {}, freshIp(), { authorization: `Bearer ${tokens.access_token}` });
    expect(sent.status).toBe(403);
    expect(sent.body.code).toBe('sso_required');
  });

  it("attack: the sso_required person's address typed in full-width letters (the same account, compared as sign-in compares it) is mailed a password recovery link, recorded as a known account", async () => {
    const domain = `corp-${randomUUID().slice(0, 6)}.example.com`;
    const provider = await makeIdentityProvider(database.db, `https://idp.${domain}`, [domain]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    const person = await createUser(database.db, { email: `worker@${domain}` });
    const wide = person.email.replace(/[a-z]/g, (c) => String.fromCodePoint(c.codePointAt(0)! - 0x61 + 0xff41));
    expect(await askAndDeliver(wide)).toEqual([]);
    const [mail] = smtp.to(person.email);
    expect(mail!.subject).toBe('How to sign in to the back office');
    expect(mail!.text).not.toMatch(/bop_/);
    expect(await database.db.selectFrom('password_resets').select('id').where('user_id', '=', person.id).execute()).toHaveLength(0);
    const recorded = await database.db.selectFrom('security_events').select('details').where('type', '=', 'password_reset_requested').where('user_id', '=', person.id).executeTakeFirstOrThrow();
    expect(recorded.details).toMatchObject({ account: 'sso_required' });
  });
});

describe('security: signing in with the old password while the reset commits', () => {
  it("the attacker's sign-in with the stolen (old) password, verified before the victim's reset commits, opens no session: 401 invalid_credentials, counted as a failure", async () => {
    const victim = await createUser(database.db);
    const victimSession = await signIn(app, victim.email, victim.password);
    const [mail] = await askAndDeliver(victim.email);
    const token = tokenIn(mail!.text);
    // The victim's sessions held on another connection: the reset's transaction (which has locked
    // the person's row by then) stays open while the attacker's sign-in checks the old password,
    // still the stored one, and reaches the statement that opens its session.
    const release = await holdLock((trx) => sql`select id from sessions where user_id = ${victim.id} for update`.execute(trx));
    const reset = confirm(token);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(1);
    const attackerIp = freshIp();
    const attacker = post('/sessions', { session: { email: victim.email, password: victim.password } }, attackerIp);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(2);
    await release();
    const [resetRes, attackerRes] = await Promise.all([reset, attacker]);
    expect(resetRes.status, resetRes.text).toBe(204);
    // The same answer as any wrong password.
    expect(attackerRes.status, attackerRes.text).toBe(401);
    expect(attackerRes.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(attackerRes.body.code).toBe('invalid_credentials');
    // No live session of the victim's: neither theirs (ended by the reset) nor one for the attacker.
    expect((await request(app).get('/me').set({ authorization: `Bearer ${victimSession.access_token}` })).status).toBe(401);
    const live = await database.db.selectFrom('sessions').select('id').where('user_id', '=', victim.id).where('revoked_at', 'is', null).where('ended_at', 'is', null).execute();
    expect(live).toEqual([]);
    // Recorded and counted as a wrong password: the throttle keeps the failure of this e-mail from this address.
    const failed = await database.db.selectFrom('security_events').select('details').where('user_id', '=', victim.id).where('type', '=', 'sign_in_failed').where('ip_address', '=', attackerIp).execute();
    expect(failed.map((e) => e.details)).toEqual([{ reason: 'wrong_password' }]);
    const counted = await database.db.selectFrom('sign_in_failures').select('id').where('email_digest', '=', emailDigest(victim.email)).where('ip_address', '=', throttledAddress(attackerIp)).execute();
    expect(counted).toHaveLength(1);
    expect(await database.db.selectFrom('security_events').select('id').where('user_id', '=', victim.id).where('type', '=', 'sign_in_succeeded').where('ip_address', '=', attackerIp).execute()).toEqual([]);
    // The new password opens a session; the old one does not.
    expect((await post('/sessions', { session: { email: victim.email, password: victim.password } }, freshIp())).status).toBe(401);
    expect((await post('/sessions', { session: { email: victim.email, password: NEW_PASSWORD } }, freshIp())).status).toBe(201);
  });
});

describe('security: a second step after the old password', () => {
  it("the attacker's second factor after the old password's step, the victim's reset in between, opens no session: 401 invalid_credentials", async () => {
    const victim = await createUser(database.db);
    const tokens = await signIn(app, victim.email, victim.password);
    const { secret } = await enrolTotp(app, tokens.access_token, clock, victim.password);
    // The attacker holds the old password and a code: the password step gives them a challenge.
    const challenge_token = await passwordStep(app, victim.email, victim.password);
    const [mail] = await askAndDeliver(victim.email);
    expect((await confirm(tokenIn(mail!.text))).status).toBe(204);
    clock.advance(30_000);
    const res = await secondStep(app, { challenge_token, totp_code: totpCode(secret, clock.now()) });
    expect(res.status, res.text).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('invalid_credentials');
    const live = await database.db.selectFrom('sessions').select('id').where('user_id', '=', victim.id).where('revoked_at', 'is', null).where('ended_at', 'is', null).execute();
    expect(live).toEqual([]);
  });
});

describe('concurrency: the reset and the changes that lock the person first', () => {
  /** A person with a live recovery link; its token. */
  async function personWithLink() {
    const person = await createUser(database.db);
    const [mail] = await askAndDeliver(person.email);
    return { person, token: tokenIn(mail!.text) };
  }

  it("an erasure racing the person's own reset: no deadlock, no 500; the erasure goes through, the link then opens nothing (400 invalid_password_reset)", async () => {
    const eraserPerson = await createUser(database.db, { permissions: ['users.erase', 'users.read'] });
    const eraserTokens = await signIn(app, eraserPerson.email, eraserPerson.password);
    await steppedUp(app, eraserTokens.access_token, eraserPerson.password);
    const eraser = { authorization: `Bearer ${eraserTokens.access_token}` };
    const { person, token } = await personWithLink();
    // The audit trail's chain lock held a moment (as the sealer does): the erasure, holding the
    // person's row by then, waits there while the reset comes in.
    const release = await holdLock((trx) => sql`select pg_advisory_xact_lock(3, 0)`.execute(trx));
    const erasure = post(`/users/${person.id}/erasure`, {}, freshIp(), eraser);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(1);
    const reset = confirm(token);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(2);
    await release();
    const [erasureRes, resetRes] = await Promise.all([erasure, reset]);
    expect(erasureRes.status, erasureRes.text).toBe(200);
    expect(resetRes.status, resetRes.text).toBe(400);
    expect(resetRes.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(resetRes.body.code).toBe('invalid_password_reset');
    const row = await database.db.selectFrom('users').select(['erased_at', 'password_hash']).where('id', '=', person.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ password_hash: null });
    expect(row.erased_at).not.toBeNull();
  });

  it("an address change racing the person's own reset: no deadlock, no 500; the address changes, the link it spent opens nothing and the password stays", async () => {
    const { person, token } = await personWithLink();
    const tokens = await signIn(app, person.email, person.password);
    await steppedUp(app, tokens.access_token, person.password);
    const me = { authorization: `Bearer ${tokens.access_token}` };
    const newEmail = `moved-${randomUUID().slice(0, 8)}@example.com`;
    expect((await post('/me/email-change', { email: newEmail }, freshIp(), me)).status).toBe(202);
    const changeMessage = await database.db.selectFrom('messages').select('body').where('recipient', '=', newEmail).executeTakeFirstOrThrow();
    const changeToken = decodeURIComponent(/#\/email\/(boe_[0-9A-Za-z_]+)/.exec(changeMessage.body)![1]!);
    // The pending change's row held a moment: its confirmation, holding the person's row by then,
    // waits there while the reset comes in.
    const release = await holdLock((trx) => sql`select id from email_changes where user_id = ${person.id} and spent_at is null for update`.execute(trx));
    const change = post('/me/email-change/confirm', { token: changeToken }, freshIp(), me);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(1);
    const reset = confirm(token);
    await expect.poll(waitingForLocks, { timeout: 10_000 }).toBe(2);
    await release();
    const [changeRes, resetRes] = await Promise.all([change, reset]);
    expect(changeRes.status, changeRes.text).toBe(204);
    // The link went to the old address: the change spent it.
    expect(resetRes.status, resetRes.text).toBe(400);
    expect(resetRes.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(resetRes.body.code).toBe('invalid_password_reset');
    expect((await post('/sessions', { session: { email: newEmail, password: person.password } }, freshIp())).status).toBe(201);
  });
});
