// Changing one's e-mail address (src/email-changes): asked with a fresh proof, a link to the new
// address read from what a real SMTP server on loopback received, followed by the same person
// signed in; the old address told. And the attacks, named as the attacker tries them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { createTestApp, createTestDatabase, type TestDatabase } from './support/context.js';
import { expectContractResponse } from './support/contract.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUp } from './support/second-factor.js';
import { makeIdentityProvider } from './support/access-fixtures.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { digestTables, tableNames } from './support/table-digest.js';
import { ManualClock } from '../src/clock.js';
import { OPERATOR } from '../src/auth/authority.js';
import { emailKey } from '../src/users/names.js';

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

let counter = 0;
const freshAddress = () => `new-${++counter}-${Date.now()}@example.org`;

/** A person signed in, their session holding a fresh proof (asking for a change needs one). */
async function signedInPerson() {
  const person = await createUser(database.db);
  const tokens = await signIn(app, person.email, person.password);
  await steppedUp(app, tokens.access_token, person.password);
  return { ...person, bearer: { authorization: `Bearer ${tokens.access_token}` } };
}

async function post(path: string, body: object, headers: Record<string, string>) {
  const res = await request(app).post(path).set(headers).send(body);
  expectContractResponse(res, 'post', path);
  return res;
}

const ask = (headers: Record<string, string>, email: string, language?: 'en' | 'fr') => post('/me/email-change', { email, ...(language ? { language } : {}) }, headers);
const confirm = (headers: Record<string, string>, token: string) => post('/me/email-change/confirm', { token }, headers);

/** The token of the newest confirmation link delivered to `email`. */
async function deliveredToken(email: string): Promise<string> {
  await services.mail.sender!.drain();
  const mail = smtp.to(email).at(-1);
  expect(mail, `a message to ${email}`).toBeDefined();
  const match = /http:\/\/localhost:3000\/#\/email\/(boe_[0-9A-Za-z_%]+)/.exec(mail!.text);
  expect(match, mail!.text).not.toBeNull();
  return decodeURIComponent(match![1]!);
}

const addressOf = async (id: string) => (await database.db.selectFrom('users').select('email').where('id', '=', id).executeTakeFirstOrThrow()).email;

describe('the flow, through a real SMTP server', () => {
  it('asks, receives the link at the new address in French, confirms it signed in: the address changes, the old one is told', async () => {
    const person = await signedInPerson();
    const next = freshAddress();
    const asked = await ask(person.bearer, next, 'fr');
    expect(asked.status, asked.text).toBe(202);
    expect(await addressOf(person.id)).toBe(person.email);
    const token = await deliveredToken(next);
    const mail = smtp.to(next).at(-1)!;
    expect(mail.subject).toBe('Confirmez votre nouvelle adresse e-mail');
    expect(mail.html).toContain(`href="http://localhost:3000/#/email/${token}"`);

    const done = await confirm(person.bearer, token);
    expect(done.status, done.text).toBe(204);
    expect(await addressOf(person.id)).toBe(next);
    await services.mail.sender!.drain();
    const told = smtp.to(person.email).at(-1)!;
    expect(told.subject).toBe('Votre adresse e-mail a été modifiée');
    expect(told.text).toContain(next);
    // The new address signs in; the old one no longer does.
    expect((await request(app).post('/sessions').send({ session: { email: next, password: person.password } })).status).toBe(201);
    expect((await request(app).post('/sessions').send({ session: { email: person.email, password: person.password } })).status).toBe(401);
    const events = await database.db.selectFrom('security_events').select(['type', 'changes']).where('user_id', '=', person.id).where('type', 'in', ['email_change_requested', 'email_changed']).orderBy('occurred_at').execute();
    expect(events.map((e) => e.type)).toEqual(['email_change_requested', 'email_changed']);
    expect(events[1]!.changes).toEqual({ before: { email: person.email }, after: { email: next } });
    // Partners who mirror people hear of it: a user.updated naming the address, published with the change.
    const published = await database.db.selectFrom('events').select(['type', 'payload', 'required_permission']).where('payload', '@>', JSON.stringify({ data: { id: person.id } }) as never).execute();
    expect(published.map((e) => [e.type, e.required_permission])).toEqual([['user.updated', 'users.read']]);
    expect(published[0]!.payload).toMatchObject({ type: 'user.updated', changed_fields: ['email'], data: { id: person.id, email: next } });
  });

  it('asking again replaces the link: the first one no longer works', async () => {
    const person = await signedInPerson();
    const first = freshAddress();
    await ask(person.bearer, first);
    const firstToken = await deliveredToken(first);
    const second = freshAddress();
    await ask(person.bearer, second);
    const secondToken = await deliveredToken(second);
    expect((await confirm(person.bearer, firstToken)).body.code).toBe('invalid_email_change');
    expect((await confirm(person.bearer, secondToken)).status).toBe(204);
    expect(await addressOf(person.id)).toBe(second);
  });
});

describe('refusals change nothing', () => {
  it('a malformed address is a 400 problem, the current address a 409 email_unchanged, and neither writes anything', async () => {
    const person = await signedInPerson();
    const tables = await tableNames(database.db);
    const before = await digestTables(database.db, tables);
    const malformed = await ask(person.bearer, 'not an address');
    expect(malformed.status).toBe(400);
    expect(malformed.headers['content-type']).toContain('application/problem+json');
    const same = await ask(person.bearer, person.email.toUpperCase());
    expect(same.status).toBe(409);
    expect(same.body.code).toBe('email_unchanged');
    expect(await digestTables(database.db, tables)).toEqual(before);
  });
});

describe('security: an address change', () => {
  it('an attacker with a stolen access token but no fresh proof cannot send a link to their own mailbox', async () => {
    const person = await createUser(database.db);
    const tokens = await signIn(app, person.email, person.password);
    const res = await ask({ authorization: `Bearer ${tokens.access_token}` }, 'attacker@evil.example');
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('step_up_required');
    expect(await database.db.selectFrom('email_changes').select('id').where('user_id', '=', person.id).execute()).toEqual([]);
  });

  it('an attacker who reads the new mailbox cannot use the link from their own account', async () => {
    const victim = await signedInPerson();
    const attacker = await signedInPerson();
    const next = freshAddress();
    await ask(victim.bearer, next);
    const token = await deliveredToken(next);
    const stolen = await confirm(attacker.bearer, token);
    expect(stolen.status).toBe(400);
    expect(stolen.body.code).toBe('invalid_email_change');
    expect(await addressOf(attacker.id)).toBe(attacker.email);
    // The victim still can.
    expect((await confirm(victim.bearer, token)).status).toBe(204);
  });

  it('an attacker replays a used link, an expired one, a forged one: one answer, nothing changes', async () => {
    const person = await signedInPerson();
    const next = freshAddress();
    await ask(person.bearer, next);
    const token = await deliveredToken(next);
    expect((await confirm(person.bearer, token)).status).toBe(204);
    const replay = await confirm(person.bearer, token);
    expect(replay.body, replay.text).toMatchObject({ code: 'invalid_email_change' });
    expect((await confirm(person.bearer, 'boe_forged_0000')).body.code).toBe('invalid_email_change');

    const later = freshAddress();
    await ask(person.bearer, later);
    const expiring = await deliveredToken(later);
    clock.advance(24 * 3600 * 1000 + 1000);
    try {
      // A day later the access token has expired too: the person signs in again (with the address now theirs).
      const again = await signIn(app, next, person.password);
      expect((await confirm({ authorization: `Bearer ${again.access_token}` }, expiring)).body.code).toBe('invalid_email_change');
    } finally {
      clock.advance(-(24 * 3600 * 1000 + 1000));
    }
    expect(await addressOf(person.id)).toBe(next);
  });

  it('an attacker who took the address first: the owner of the link learns it only then (409 email_taken), and the request told nothing', async () => {
    const person = await signedInPerson();
    const other = await createUser(database.db);
    // Asking for an address another account has answers as for any other.
    const asked = await ask(person.bearer, other.email);
    expect(asked.status).toBe(202);
    const token = await deliveredToken(other.email);
    const res = await confirm(person.bearer, token);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('email_taken');
    expect(await addressOf(person.id)).toBe(person.email);
  });

  it('a recovery link sent to the old address stops working once the address changes', async () => {
    const person = await signedInPerson();
    expect((await request(app).post('/password-resets').send({ email: person.email })).status).toBe(202);
    const live = () => database.db.selectFrom('password_resets').select('id').where('user_id', '=', person.id).where('spent_at', 'is', null).execute();
    expect(await live()).toHaveLength(1);
    const next = freshAddress();
    await ask(person.bearer, next);
    await confirm(person.bearer, await deliveredToken(next));
    expect(await live()).toEqual([]);
  });

  it('an attacker floods an address with links: the sixth request of the hour is refused', async () => {
    const person = await signedInPerson();
    for (let i = 0; i < 5; i++) expect((await ask(person.bearer, freshAddress())).status).toBe(202);
    const refused = await ask(person.bearer, freshAddress());
    expect(refused.status).toBe(429);
  });

  it('a person moving their address into a company whose people must sign in there is refused (sso_required)', async () => {
    const provider = await makeIdentityProvider(database.db, 'https://idp.example', [`corp-${Date.now()}.example`]);
    await database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
    const domain = (await database.db.selectFrom('identity_provider_domains').select('domain').where('provider_id', '=', provider).executeTakeFirstOrThrow()).domain;
    const person = await signedInPerson();
    const res = await ask(person.bearer, `me@${domain}`);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('sso_required');
    expect(await database.db.selectFrom('email_changes').select('id').where('user_id', '=', person.id).execute()).toEqual([]);
  });

  it('erasing a person removes their pending change and the address it names', async () => {
    const person = await signedInPerson();
    await ask(person.bearer, freshAddress());
    expect(await database.db.selectFrom('email_changes').select('id').where('user_id', '=', person.id).execute()).toHaveLength(1);
    await services.erasure.erase(OPERATOR, person.id);
    expect(await database.db.selectFrom('email_changes').select('id').where('user_id', '=', person.id).execute()).toEqual([]);
  });
});

describe('security: an address change raced or repeated', () => {
  /** Until a statement of this test database waits on a lock. */
  async function someoneWaitsOnALock(): Promise<void> {
    for (let i = 0; i < 400; i++) {
      const { rows } = await database.pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
      if (rows[0]!.n > 0) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('no statement waited on a lock');
  }

  it('an attacker creates an account with the address while its owner confirms (between the check and the write): 409 email_taken, not a 500', async () => {
    const person = await signedInPerson();
    const next = freshAddress();
    await ask(person.bearer, next);
    const token = await deliveredToken(next);
    // The rival account (a sign-up, a SCIM creation, an invitation accepted), written but not yet committed.
    let commit!: () => void;
    const committing = new Promise<void>((r) => (commit = r));
    let written!: () => void;
    const isWritten = new Promise<void>((r) => (written = r));
    const rival = database.db.transaction().execute(async (trx) => {
      await trx.insertInto('users').values({ email: next, email_key: emailKey(next), first_name: 'Rival', last_name: 'Account', password_hash: null, must_change_password: false }).execute();
      written();
      await committing;
    });
    await isWritten;
    const confirming = confirm(person.bearer, token);
    // The confirmation found the address free and now waits on the rival's index entry.
    await someoneWaitsOnALock();
    commit();
    await rival;
    const res = await confirming;
    expect(res.status, res.text).toBe(409);
    expect(res.body.code).toBe('email_taken');
    expect(await addressOf(person.id)).toBe(person.email);
  });

  it('an attacker floods addresses past the hourly cap by confirming a change to a mailbox of their own now and then, which wiped the count', async () => {
    const person = await signedInPerson();
    for (let i = 0; i < 4; i++) expect((await ask(person.bearer, freshAddress())).status).toBe(202);
    const own = freshAddress();
    expect((await ask(person.bearer, own)).status).toBe(202);
    expect((await confirm(person.bearer, await deliveredToken(own))).status).toBe(204);
    // The sixth request of the hour, to yet another stranger's address.
    const sixth = await ask(person.bearer, freshAddress());
    expect(sixth.status).toBe(429);
  });
});
