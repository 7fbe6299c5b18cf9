// A newcomer's first day in a real Chromium against the real service. With no SMTP_URL the messages
// go to the development mailbox, which an administrator opens from the Invitations page (marked as
// such). An administrator invites a colleague, opens the link from the development mailbox, the
// colleague sets a password and signs in; then someone uses "Forgot your password?", the link is
// followed from the mailbox, a new password is set, and the person signs in with it. A person
// picks French: their notices are French, a sign-in from another browser one of them. With SMTP_URL
// pointing at a real SMTP server on loopback, the link is read from the message it received.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { makeRole } from '../support/access-fixtures.js';
import { confirmItIsMe, createAdministrator, createPerson, openBrowser, signIn, startService, type BrowserSession } from '../support/e2e.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  // The links point at the first PASSKEY_ORIGINS origin: this service's.
  service = await startService({ host: 'localhost', env: (baseUrl) => ({ PASSKEY_ORIGINS: baseUrl }) });
  await createAdministrator(service.database.db, ADMIN);
  await makeRole(service.database.db, ['tasks.list', 'tasks.read'], 'support');
});
afterAll(() => service?.stop());

/** The newest link to `to` shown by the development mailbox page (opened from the Invitations page). */
async function linkFromMailbox(page: Page, to: string, kind: RegExp): Promise<string> {
  await page.goto(`${service.baseUrl}/#/invitations`);
  await page.getByRole('link', { name: 'Open the development mailbox' }).click();
  await page.getByRole('heading', { name: 'Development mailbox', level: 1 }).waitFor();
  await page.getByText(/nothing is sent by e-mail on this server/).waitFor();
  const message = page.getByRole('listitem').filter({ hasText: `To ${to}` }).first();
  await message.waitFor();
  const link = await message.getByRole('link', { name: kind }).first().getAttribute('href');
  expect(link).toBeTruthy();
  return link!;
}

describe('mail in the back office, through the development mailbox', () => {
  let admin: BrowserSession;
  beforeAll(async () => {
    admin = await openBrowser();
    await signIn(admin.page, service.baseUrl, ADMIN);
    await admin.page.getByRole('link', { name: 'Invitations' }).waitFor();
  });
  afterAll(() => admin?.close());

  it('invite a colleague, open the link from the development mailbox, set a password, sign in', async () => {
    const { page } = admin;
    await page.getByRole('link', { name: 'Invitations' }).click();
    await page.getByLabel('E-mail address').fill('grace@example.com');
    await page.getByLabel('Roles').fill('support');
    await page.getByRole('button', { name: 'Send the invitation' }).click();
    await confirmItIsMe(page, { password: ADMIN.password });
    await page.getByText('Invitation sent to grace@example.com.').waitFor();
    const link = await linkFromMailbox(page, 'grace@example.com', /#\/invitation\?token=/);

    const colleague = await openBrowser();
    try {
      await colleague.page.goto(link);
      await colleague.page.getByRole('heading', { name: 'Create your account' }).waitFor();
      await colleague.page.getByLabel('First name').fill('Grace');
      await colleague.page.getByLabel('Last name').fill('Hopper');
      await colleague.page.getByLabel('Password (12 characters or more)').fill('a password of my own choosing');
      await colleague.page.getByRole('button', { name: 'Create my account' }).click();
      await colleague.page.getByText('Signed in as Grace Hopper').waitFor();
    } finally {
      await colleague.close();
    }
    // And signs in again later, with that password.
    const later = await openBrowser();
    try {
      await signIn(later.page, service.baseUrl, { email: 'grace@example.com', password: 'a password of my own choosing' });
      await later.page.getByText('Signed in as Grace Hopper').waitFor();
    } finally {
      await later.close();
    }
  });

  it('forgot password: the link from the development mailbox, a new password, then signing in with it', async () => {
    const person = await openBrowser();
    try {
      const { page } = person;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Forgot your password?' }).waitFor();
      await page.getByLabel('E-mail address').fill('grace@example.com');
      await page.getByRole('button', { name: 'Send me a link' }).click();
      await page.getByText('If an account has this address, a message with a link is on its way.').waitFor();

      const link = await linkFromMailbox(admin.page, 'grace@example.com', /#\/password-reset\?token=/);
      await page.goto(link);
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await page.getByLabel('New password (12 characters or more)').fill('another sentence I will remember');
      await page.getByRole('button', { name: 'Set my new password' }).click();
      await page.getByText('Your password is changed. Sign in with it.').waitFor();
      await page.getByRole('link', { name: 'Back to sign-in' }).click();
      await signIn(page, service.baseUrl, { email: 'grace@example.com', password: 'another sentence I will remember' });
      await page.getByText('Signed in as Grace Hopper').waitFor();
      // The notice of the change, readable in the back office too.
      await page.getByRole('link', { name: 'Security' }).click();
      await page.getByRole('heading', { name: 'Security notices' }).waitFor();
      await page.getByText('Your password was changed').waitFor();

      // The same link a second time opens nothing.
      const again = await openBrowser();
      try {
        await again.page.goto(link);
        await again.page.getByLabel('New password (12 characters or more)').fill('a third sentence, never accepted');
        await again.page.getByRole('button', { name: 'Set my new password' }).click();
        await again.page.getByText('This link is used, replaced or expired. Ask for a new one.').waitFor();
      } finally {
        await again.close();
      }
    } finally {
      await person.close();
    }
  });

  it('the language picked while signed in is that of the person\'s messages: a sign-in from another browser is told on the Security page, in French', async () => {
    const person = { email: 'margaret@example.com', password: 'a long password of Margaret', firstName: 'Margaret', lastName: 'Hamilton' };
    await createPerson(service.database.db, person, 'support');
    const session = await openBrowser();
    try {
      const { page } = session;
      await signIn(page, service.baseUrl, person);
      await page.getByText('Signed in as Margaret Hamilton').waitFor();
      await page.getByLabel('Language').selectOption('fr');
      await page.getByText('Connecté : Margaret Hamilton').waitFor();
      const language = () => service.database.db.selectFrom('users').select('language').where('email', '=', person.email).executeTakeFirstOrThrow();
      // The page does not wait for its PATCH /me: wait for the write, as long as a browser step may take.
      await expect.poll(async () => (await language()).language, { timeout: 20_000, interval: 50 }).toBe('fr');

      // The same person signs in from another browser (Edge on Windows, not this Chromium).
      const elsewhere = await fetch(`${service.baseUrl}/sessions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0' },
        body: JSON.stringify({ session: { email: person.email, password: person.password } }),
      });
      expect(elsewhere.status).toBe(201);
      await page.getByRole('link', { name: 'Sécurité' }).click();
      await page.getByRole('heading', { name: 'Avis de sécurité' }).waitFor();
      const notice = page.getByRole('listitem').filter({ hasText: 'Une connexion depuis un nouvel appareil ou navigateur' });
      await notice.waitFor();
      expect(await notice.getAttribute('lang')).toBe('fr');
      await notice.getByText(/Edge sous Windows/).waitFor();
    } finally {
      await session.close();
    }
  });

  it('in French: « Mot de passe oublié ? » and its page', async () => {
    const person = await openBrowser({ locale: 'fr-FR' });
    try {
      const { page } = person;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('link', { name: 'Mot de passe oublié ?' }).click();
      await page.getByLabel('Adresse e-mail').fill('nobody@example.com');
      await page.getByRole('button', { name: 'M’envoyer un lien' }).click();
      await page.getByText('Si un compte a cette adresse, un message avec un lien est en route.', { exact: false }).waitFor();
    } finally {
      await person.close();
    }
  });
});

describe('mail in the back office, through a real SMTP server', () => {
  let smtp: TestSmtpServer;
  let sending: Awaited<ReturnType<typeof startService>>;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    sending = await startService({ host: 'localhost', env: (baseUrl) => ({ PASSKEY_ORIGINS: baseUrl, SMTP_URL: smtp.url, MAIL_POLL_INTERVAL_MS: '100' }) });
    // The sender in the background, polling the outbox, as src/main.ts starts it.
    sending.services.mail.sender!.start();
    await createAdministrator(sending.database.db, ADMIN);
  });
  afterAll(async () => {
    await sending?.services.mail.sender?.stop();
    await sending?.stop();
    await smtp?.close();
  });

  it('forgot password in French: the delivered message (plain text and HTML) gives the link, followed in Chromium; no development mailbox here', async () => {
    const person = await openBrowser({ locale: 'fr-FR' });
    try {
      const { page } = person;
      await page.goto(`${sending.baseUrl}/`);
      await page.getByRole('link', { name: 'Mot de passe oublié ?' }).click();
      await page.getByLabel('Adresse e-mail').fill(ADMIN.email);
      await page.getByRole('button', { name: 'M’envoyer un lien' }).click();
      await page.getByText('Si un compte a cette adresse', { exact: false }).waitFor();
      const [mail] = await smtp.waitFor(1);
      expect(mail!.to).toEqual([ADMIN.email]);
      expect(mail!.subject).toBe('Choisissez un nouveau mot de passe');
      const link = /(http:\/\/\S+#\/password-reset\?token=\S+)/.exec(mail!.text)![1]!;
      expect(mail!.html).toContain(`href="${link}"`);
      await page.goto(link);
      await page.getByLabel('Nouveau mot de passe (12 caractères ou plus)').fill('une phrase nouvelle et assez longue');
      await page.getByRole('button', { name: 'Enregistrer mon nouveau mot de passe' }).click();
      await page.getByText('Votre mot de passe est changé.', { exact: false }).waitFor();
      // Signed in with the new password; with SMTP configured, there is no development mailbox.
      const res = await fetch(`${sending.baseUrl}/dev-mailbox/messages`);
      expect(res.status).toBe(404);
    } finally {
      await person.close();
    }
    const admin = await openBrowser();
    try {
      await signIn(admin.page, sending.baseUrl, { email: ADMIN.email, password: 'une phrase nouvelle et assez longue' });
      await admin.page.getByRole('link', { name: 'Invitations' }).click();
      await admin.page.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
      expect(await admin.page.getByRole('link', { name: 'Open the development mailbox' }).count()).toBe(0);
    } finally {
      await admin.close();
    }
  });
});
