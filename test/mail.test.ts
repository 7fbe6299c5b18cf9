// The outbox of mail sent to a real SMTP server on loopback (smtp-server, read back with
// mailparser): what arrives (plain text and HTML, the language, the link that works), retries with
// backoff, giving up, several senders never sending one message twice, a crash between sending and
// marking, an unreachable server that never fails or slows the change; the configuration checked
// at start; the templates; the development mailbox; the metrics of the backlog.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { createTestApp, createTestDatabase, testConfig, type TestDatabase } from './support/context.js';
import { createUser, signIn } from './support/sessions.js';
import { steppedUpInDatabase } from './support/second-factor.js';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.js';
import { ManualClock, systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { LANGUAGES, renderMessage, type MessageKind, type Templates } from '../src/mail/templates.js';
import { queueMessage } from '../src/mail/outbox.js';
import { MailSender } from '../src/mail/sender.js';
import { smtpTransport } from '../src/mail/transport.js';
import { parseSmtpUrl, type SmtpSettings } from '../src/smtp-url.js';
import { serviceMetrics } from '../src/metrics/registry.js';
import { createLogger } from '../src/logger.js';
import { Writable } from 'node:stream';
import { SMTPServer } from 'smtp-server';
import type { MailTransport } from '../src/mail/transport.js';

let database: TestDatabase;
let smtp: TestSmtpServer;
const silent = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));

beforeAll(async () => {
  database = await createTestDatabase();
  smtp = await startSmtpServer({ auth: { user: 'mailer', password: 'mailer password' } });
});
afterAll(async () => {
  await smtp.close();
  await database.destroy();
});

const address = () => `someone-${randomUUID().slice(0, 8)}@example.com`;
const settings = (url: string) => parseSmtpUrl(url) as SmtpSettings;
const policy = { from: 'Back office <no-reply@backoffice.test>', batch: 10, pollIntervalMs: 50, leaseMs: 60_000, retryScheduleS: [10, 60] };

async function queue(recipient: string, now = new Date(), language: 'en' | 'fr' = 'en') {
  await queueMessage(database.db, { recipient, kind: 'password_changed', language, values: { at: now, through: 'change' }, now });
}

async function rowOf(recipient: string) {
  return database.db.selectFrom('messages').selectAll().where('recipient', '=', recipient).executeTakeFirstOrThrow();
}

describe('templates', () => {
  const samples: { [K in MessageKind]: Templates[K] } = {
    invitation: { link: 'http://localhost:3000/#/invitation?token=boi_x', inviter: 'Ada <Lovelace> & co', expiresAt: new Date('2027-01-10T12:00:00Z') },
    password_reset: { link: 'http://localhost:3000/#/password-reset?token=bop_x', expiresAt: new Date('2027-01-10T12:30:00Z'), byAdministrator: false },
    password_reset_sso: { provider: 'Acme SSO', signInLink: 'http://localhost:3000/' },
    password_changed: { at: new Date('2027-01-10T12:00:00Z'), through: 'reset' },
    second_factor_added: { at: new Date('2027-01-10T12:00:00Z'), method: 'totp' },
    second_factor_removed: { at: new Date('2027-01-10T12:00:00Z'), method: 'passkey' },
    second_factors_reset: { at: new Date('2027-01-10T12:00:00Z') },
    api_key_created: { at: new Date('2027-01-10T12:00:00Z'), name: 'CI <deploy>' },
    account_disabled: { at: new Date('2027-01-10T12:00:00Z') },
    roles_changed: { at: new Date('2027-01-10T12:00:00Z'), roles: ['support', 'auditors'] },
    new_device_sign_in: { at: new Date('2027-01-10T12:00:00Z'), address: '203.0.113.7', browser: 'Firefox', system: 'Linux' },
  };

  it('every kind is written in English and French, as plain text and HTML with the same link', () => {
    for (const kind of Object.keys(samples) as MessageKind[]) {
      const [en, fr] = LANGUAGES.map((language) => renderMessage(kind, language, samples[kind] as never));
      for (const message of [en!, fr!]) {
        expect(message.subject.length).toBeGreaterThan(5);
        expect(message.html).toMatch(/^<!doctype html>/);
        const link = 'link' in samples[kind] ? (samples[kind] as { link: string }).link : 'signInLink' in samples[kind] ? (samples[kind] as { signInLink: string }).signInLink : undefined;
        if (link) {
          expect(message.text).toContain(link);
          expect(message.html).toContain(`href="${link}"`);
        }
      }
      expect(fr!.subject).not.toBe(en!.subject);
      expect(fr!.html).toContain('lang="fr"');
      expect(en!.html).toContain('lang="en"');
    }
  });

  it('HTML escapes the values (a name cannot inject markup); plain text keeps them as typed', () => {
    const m = renderMessage('invitation', 'en', samples.invitation);
    expect(m.html).toContain('Ada &lt;Lovelace&gt; &amp; co');
    expect(m.html).not.toContain('<Lovelace>');
    expect(m.text).toContain('Ada <Lovelace> & co');
  });

  it('the times are written in UTC, to the minute', () => {
    expect(renderMessage('password_reset', 'en', samples.password_reset).text).toContain('2027-01-10 12:30 UTC');
    expect(renderMessage('password_reset', 'fr', samples.password_reset).text).toContain('2027-01-10 12:30 (UTC)');
  });
});

describe('configuration', () => {
  const env = { NODE_ENV: 'test', SEALING_KEYS: process.env.SEALING_KEYS! };

  it('a malformed SMTP_URL refuses to start, without echoing its password', () => {
    for (const bad of ['not a url', 'http://mail.example.com', 'smtp://', 'smtp://mail.example.com/path', 'smtp://u:secret-pw@mail.example.com?starttls=maybe', 'smtp://mail.example.com?unknown=1']) {
      let message = '';
      try {
        loadConfig({ ...env, SMTP_URL: bad });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message, bad).toMatch(/SMTP_URL/);
      expect(message).not.toContain('secret-pw');
    }
  });

  it('reads smtp:// (STARTTLS), smtps:// (TLS), the port and the credentials', () => {
    expect(loadConfig({ ...env, SMTP_URL: 'smtp://u%40x:p%3Aw@mail.example.com:2525?starttls=required' }).mail.smtp).toEqual({
      secure: false, host: 'mail.example.com', port: 2525, user: 'u@x', password: 'p:w', requireTls: true, verifyCertificate: true,
    });
    expect(loadConfig({ ...env, SMTP_URL: 'smtps://mail.example.com' }).mail.smtp).toMatchObject({ secure: true, port: 465 });
  });

  it('production refuses to start without SMTP_URL unless told that nothing sends, and refuses the development mailbox', () => {
    expect(() => loadConfig({ ...env, NODE_ENV: 'production' })).toThrow(/SMTP_URL: required with NODE_ENV=production/);
    expect(loadConfig({ ...env, NODE_ENV: 'production', MAIL_OUTBOX_ONLY: 'true' }).mail).toMatchObject({ smtp: null, devMailbox: false, send: false });
    expect(loadConfig({ ...env, NODE_ENV: 'production', SMTP_URL: 'smtp://mail.example.com' }).mail).toMatchObject({ devMailbox: false, send: true });
    expect(() => loadConfig({ ...env, NODE_ENV: 'production', MAIL_OUTBOX_ONLY: 'true', MAIL_DEV_MAILBOX: 'on' })).toThrow(/MAIL_DEV_MAILBOX: not with NODE_ENV=production/);
  });

  it('outside production, no SMTP_URL means the development mailbox', () => {
    expect(loadConfig(env).mail).toMatchObject({ smtp: null, devMailbox: true, send: true });
    expect(loadConfig({ ...env, SMTP_URL: 'smtp://127.0.0.1:2525' }).mail.devMailbox).toBe(false);
    expect(() => loadConfig({ ...env, SMTP_URL: 'smtp://127.0.0.1:2525', MAIL_DEV_MAILBOX: 'on' })).toThrow(/MAIL_DEV_MAILBOX/);
  });
});

describe('sending to a real SMTP server', () => {
  it('an invitation arrives in plain text and HTML, in its language, over STARTTLS with authentication; its link works', async () => {
    const { app, services } = createTestApp(database.db, { clock: systemClock, env: { SMTP_URL: smtp.url } });
    const admin = await createUser(database.db, { permissions: ['invitations.manage', 'users.create'] });
    const tokens = await signIn(app, admin.email, admin.password);
    await steppedUpInDatabase(database.db, admin.id);
    const email = address();
    const made = await request(app).post('/invitations').set({ authorization: `Bearer ${tokens.access_token}` }).send({ email, language: 'fr' });
    expect(made.status, made.text).toBe(201);
    expect(services.mail.devMailbox).toBeUndefined();
    await services.mail.sender!.drain();
    const [mail] = smtp.to(email);
    expect(mail, 'delivered').toBeDefined();
    expect(mail!.secure).toBe(true);
    expect(mail!.subject).toBe('Invitation au back office');
    expect(mail!.language).toBe('fr');
    expect(mail!.from).toBe('no-reply@backoffice.local');
    const link = /http:\/\/localhost:3000\/#\/invitation\?token=(boi_[0-9A-Za-z_]+)/.exec(mail!.text);
    expect(link, mail!.text).not.toBeNull();
    expect(mail!.html).toContain(`href="${link![0]}"`);
    expect(mail!.html).toContain('Créer mon compte');
    const row = await rowOf(email);
    expect(row).toMatchObject({ delivered_via: 'smtp', attempts: 1, claim_token: null, last_error: null });
    expect(mail!.messageId).toBe(`<${row.id}@backoffice>`);
    // Followed over HTTP: the account is made.
    const accepted = await request(app).post('/invitations/accept').send({ token: decodeURIComponent(link![1]!), first_name: 'Grace', last_name: 'Hopper', password: 'correct horse battery staple' });
    expect(accepted.status, accepted.text).toBe(201);
  });

  it('a temporary refusal is retried after the backoff; a permanent one is given up; the reason is kept, not the message', async () => {
    const clock = new ManualClock(new Date());
    const outcomes: string[] = [];
    const sender = new MailSender({ db: database.db, clock, logger: silent, outcomes: { signIn() {}, refresh() {}, apiKeyAuthentication() {}, mail: (o, n) => outcomes.push(...Array<string>(n).fill(o)) } }, policy, { kind: 'smtp', transport: smtpTransport(settings(smtp.url), 5_000) });
    const later = address();
    await queue(later, clock.now());
    smtp.refuse(1, 451);
    expect(await sender.runOnce()).toBe(1);
    let row = await rowOf(later);
    expect(row.sent_at).toBeNull();
    expect(row.attempts).toBe(1);
    expect(row.last_error).toMatch(/451/);
    const wait = new Date(row.next_attempt_at).getTime() - clock.now().getTime();
    expect(wait).toBeGreaterThanOrEqual(8_000);
    expect(wait).toBeLessThanOrEqual(12_000);
    expect(await sender.runOnce()).toBe(0); // not due yet
    clock.advance(12_000);
    expect(await sender.runOnce()).toBe(1);
    row = await rowOf(later);
    expect(row.sent_at).not.toBeNull();
    expect(smtp.to(later)).toHaveLength(1);

    const never = address();
    await queue(never, clock.now());
    smtp.refuse(1, 550);
    await sender.runOnce();
    row = await rowOf(never);
    expect(row.failed_at).not.toBeNull();
    expect(row.last_error).toMatch(/550/);
    clock.advance(3_600_000);
    expect(await sender.runOnce()).toBe(0);
    expect(outcomes).toEqual(['retried', 'sent', 'given_up']);
    await sender.stop();
  });

  it("attack: a mail server that names the refused recipient in its reply (Postfix's \"550 5.1.1 <x@…>: Recipient address rejected\") puts the address in the service's log", async () => {
    const refusing = new SMTPServer({
      authOptional: true,
      disabledCommands: ['AUTH', 'STARTTLS'],
      logger: false,
      onRcptTo(to, _session, callback) {
        callback(Object.assign(new Error(`5.1.1 <${to.address}>: Recipient address rejected: User unknown in virtual mailbox table`), { responseCode: 550 }));
      },
    });
    refusing.on('error', () => {});
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const lines: string[] = [];
    const logger = createLogger('info', new Writable({ write: (chunk, _e, done) => (lines.push(String(chunk)), done()) }));
    const clock = new ManualClock(new Date());
    const url = `smtp://127.0.0.1:${(refusing.server.address() as AddressInfo).port}`;
    const sender = new MailSender({ db: database.db, clock, logger }, policy, { kind: 'smtp', transport: smtpTransport(settings(url), 5_000) });
    try {
      const victim = `grace-${randomUUID().slice(0, 8)}@example.com`;
      await queue(victim, clock.now());
      await sender.runOnce();
      const row = await rowOf(victim);
      expect(row.failed_at).not.toBeNull();
      // The reason is kept (its code and words), and the log says which message: never to whom.
      expect(row.last_error).toMatch(/550 5\.1\.1 .*Recipient address rejected/);
      expect(row.last_error).not.toContain(victim);
      const log = lines.join('');
      expect(log).toContain(row.id);
      expect(log).toMatch(/Recipient address rejected/);
      expect(log).not.toContain(victim.split('@')[0]);
    } finally {
      await sender.stop();
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  it("attack: a long reply from the mail server (or a network error's text) holds the sender's event loop while its addresses are scrubbed", async () => {
    // Permanent (5xx): given up at once, not left for the next tests' senders to retry.
    const long = `550 5.7.1 ${'x'.repeat(200_000)} <held@example.com>`;
    const transport: MailTransport = { send: () => Promise.reject(Object.assign(new Error(long), { responseCode: 550 })), close: () => {} };
    const clock = new ManualClock(new Date());
    const sender = new MailSender({ db: database.db, clock, logger: silent }, policy, { kind: 'smtp', transport });
    const victim = `long-${randomUUID().slice(0, 8)}@example.com`;
    await queue(victim, clock.now());
    const started = performance.now();
    await sender.runOnce();
    // Linear work is a few milliseconds; a pattern that backtracks over the run takes minutes.
    expect(performance.now() - started).toBeLessThan(5_000);
    const row = await rowOf(victim);
    expect(row.failed_at).not.toBeNull();
    expect(row.last_error).toMatch(/^550 5\.7\.1 x+$/);
    await sender.stop();
  });

  it('several senders at once never send one message twice', async () => {
    const clock = new ManualClock(new Date());
    const recipients = Array.from({ length: 30 }, () => address());
    for (const r of recipients) await queue(r, clock.now());
    const senders = [1, 2, 3].map(() => new MailSender({ db: database.db, clock, logger: silent }, { ...policy, batch: 4 }, { kind: 'smtp', transport: smtpTransport(settings(smtp.url), 5_000) }));
    await Promise.all(senders.map((s) => s.drain()));
    for (const r of recipients) expect(smtp.to(r), r).toHaveLength(1);
    await Promise.all(senders.map((s) => s.stop()));
  });

  it('a sender that dies between sending and marking: the message is not taken again while its lease holds, then once', async () => {
    const clock = new ManualClock(new Date());
    const recipient = address();
    await queue(recipient, clock.now());
    // The first sender's claim, as a crash after sending would leave it.
    const { id } = await rowOf(recipient);
    await database.db.updateTable('messages').set({ claim_token: randomUUID(), claimed_until: new Date(clock.now().getTime() + policy.leaseMs), attempts: 1 }).where('id', '=', id).execute();
    const sender = new MailSender({ db: database.db, clock, logger: silent }, policy, { kind: 'smtp', transport: smtpTransport(settings(smtp.url), 5_000) });
    expect(await sender.runOnce()).toBe(0);
    clock.advance(policy.leaseMs + 1);
    expect(await sender.runOnce()).toBe(1);
    expect(smtp.to(recipient)).toHaveLength(1);
    expect(smtp.to(recipient)[0]!.messageId).toBe(`<${id}@backoffice>`);
    await sender.stop();
  });

  it('TLS from the first byte (smtps://) works as well', async () => {
    const tls = await startSmtpServer({ secure: true });
    try {
      const recipient = address();
      await queue(recipient, new Date(), 'fr');
      const sender = new MailSender({ db: database.db, clock: systemClock, logger: silent }, policy, { kind: 'smtp', transport: smtpTransport(settings(tls.url), 5_000) });
      await sender.drain();
      expect(tls.to(recipient)[0]).toMatchObject({ secure: true, subject: 'Votre mot de passe a changé', language: 'fr' });
      await sender.stop();
    } finally {
      await tls.close();
    }
  });

  it('an unreachable server never fails nor slows the change that wrote the message; the message waits', async () => {
    // A port nothing listens on.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const { app, services } = createTestApp(database.db, { clock: systemClock, env: { SMTP_URL: `smtp://127.0.0.1:${port}`, MAIL_TIMEOUT_MS: '500' } });
    const person = await createUser(database.db);
    const asked = await request(app).post('/password-resets').send({ email: person.email });
    expect(asked.status).toBe(202);
    // The answer did not wait for the server: the message was not even tried yet.
    expect(await rowOf(person.email)).toMatchObject({ attempts: 0, sent_at: null, failed_at: null, last_error: null });
    expect(await services.mail.sender!.runOnce()).toBe(1);
    const row = await rowOf(person.email);
    expect(row.sent_at).toBeNull();
    expect(row.failed_at).toBeNull();
    expect(row.last_error).toMatch(/ECONNREFUSED|connect/i);
    await services.mail.sender!.stop();
  });
});

describe('woken at the commit', () => {
  it('a recovery link leaves at once, though the next poll is an hour away: the sender listens for the messages table', async () => {
    const { app, services } = createTestApp(database.db, { clock: systemClock, env: { SMTP_URL: smtp.url, MAIL_POLL_INTERVAL_MS: '3600000' } });
    const person = await createUser(database.db);
    const sender = services.mail.sender!;
    sender.start(database.url);
    try {
      const before = smtp.to(person.email).length;
      expect((await request(app).post('/password-resets').send({ email: person.email })).status).toBe(202);
      // Woken, it is a matter of milliseconds; the bound only has to be far below the hour-long poll, however busy the machine.
      const deadline = Date.now() + 25_000;
      while (smtp.to(person.email).length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(smtp.to(person.email).length, 'delivered without waiting for the poll').toBe(before + 1);
    } finally {
      await sender.stop();
    }
  });
});

describe('the development mailbox', () => {
  it('administrators read the messages there, marked as the development mailbox; the sender marks them, never sends', async () => {
    const { app, services } = createTestApp(database.db, { clock: systemClock });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const tokens = await signIn(app, admin.email, admin.password);
    const recipient = address();
    await queue(recipient);
    const read = await request(app).get('/dev-mailbox/messages').set({ authorization: `Bearer ${tokens.access_token}` });
    expect(read.status, read.text).toBe(200);
    expect(read.headers['cache-control']).toBe('no-store');
    expect(read.body.development_mailbox).toBe(true);
    const shown = read.body.data.find((m: { recipient: string }) => m.recipient === recipient);
    expect(shown).toMatchObject({ kind: 'password_changed', language: 'en', subject: 'Your password was changed' });
    expect(shown.html).toMatch(/^<!doctype html>/);
    await services.mail.sender!.drain();
    expect(await rowOf(recipient)).toMatchObject({ delivered_via: 'dev_mailbox' });
    expect(smtp.to(recipient)).toHaveLength(0);
  });

  it('security: only administrators, signed in; no credential is 401, a lesser person 403, an API key 401', async () => {
    const { app } = createTestApp(database.db, { clock: systemClock });
    expect((await request(app).get('/dev-mailbox/messages')).status).toBe(401);
    const person = await createUser(database.db, { permissions: ['invitations.manage', 'users.create', 'users.update'] });
    const tokens = await signIn(app, person.email, person.password);
    const refused = await request(app).get('/dev-mailbox/messages').set({ authorization: `Bearer ${tokens.access_token}` });
    expect(refused.status).toBe(403);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await request(app).get('/dev-mailbox/messages').set({ 'x-api-key': 'bok_nothing' })).status).toBe(401);
  });

  it('security: with SMTP_URL (and so in production) the route does not exist', async () => {
    const { app } = createTestApp(database.db, { clock: systemClock, env: { SMTP_URL: smtp.url } });
    const admin = await createUser(database.db, { roles: ['admin'] });
    const tokens = await signIn(app, admin.email, admin.password);
    const res = await request(app).get('/dev-mailbox/messages').set({ authorization: `Bearer ${tokens.access_token}` });
    expect(res.status).toBe(404);
  });
});

describe('metrics', () => {
  it('the backlog (waiting, given up), the oldest wait and the outcomes are Prometheus metrics', async () => {
    const clock = new ManualClock(new Date(Date.now() + 3_600_000));
    const given = address();
    await queue(given);
    await database.db.updateTable('messages').set({ failed_at: new Date(), last_error: '550 refused' }).where('recipient', '=', given).execute();
    await queue(address());
    const metrics = serviceMetrics({ db: database.db, pool: database.pool, clock });
    metrics.outcomes.mail!('sent', 3);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/backoffice_mail_backlog\{state="waiting"\} [1-9]/);
    expect(text).toMatch(/backoffice_mail_backlog\{state="failed"\} [1-9]/);
    expect(text).toMatch(/backoffice_mail_oldest_waiting_seconds [1-9]\d*/);
    expect(text).toContain('backoffice_mail_messages_total{outcome="sent"} 3');
    expect(text).toContain('backoffice_mail_messages_total{outcome="given_up"} 0');
  });
});

// The configuration of the tests themselves keeps the development mailbox on.
it('the tests run with the development mailbox', () => {
  expect(testConfig().mail.devMailbox).toBe(true);
});
