// The back office's identity providers (docs/IDENTITY.md) in a real Chromium: an
// administrator adds, changes and removes one on the "Identity providers" page, the client secret
// typed once and never shown again; then a person of the provider's domain signs in from the
// sign-in page's "Sign in with ..." button, through the real `oidc-provider`'s login page, back
// into the back office.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import request from 'supertest';
import type { Page } from 'playwright-core';
import { budget } from '../support/budgets.js';
import { confirmItIsMe, createAdministrator, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { startRealProvider, type RealProvider } from '../support/oidc-provider.js';
import { signIn as apiSignIn } from '../support/sessions.js';
import { steppedUp } from '../support/second-factor.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let op: RealProvider;
let redirectUri: string;

beforeAll(async () => {
  service = await startService({ env: (baseUrl) => ((redirectUri = `${baseUrl}/sign-in/oidc`), { OIDC_REDIRECT_URI: redirectUri }) });
  op = await startRealProvider(redirectUri);
  await createAdministrator(service.database.db, ADMIN);
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await op?.close();
  await service?.stop();
});

describe('identity providers in the back office', () => {
  it('an administrator adds, changes and removes a provider; the client secret is typed once and never shown', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Identity providers' }).click();
      await page.getByRole('heading', { name: 'Identity providers' }).waitFor();
      await page.getByText('No identity provider yet.').waitFor();

      await page.getByRole('link', { name: 'New identity provider' }).click();
      const form = page.locator('form.panel');
      await form.getByLabel('Name').fill('Corp');
      await form.getByLabel('Issuer').fill(op.issuer);
      await form.getByLabel('Client id').fill(op.clientId);
      await form.getByLabel('Client secret').fill(op.clientSecret);
      await form.getByLabel('E-mail domains').fill('corp.example, corp.test');
      await form.getByLabel('Groups to roles').fill('support: admin');
      await form.getByLabel('Create an account at the first sign-in of someone unknown').check();
      await form.getByRole('button', { name: 'Save' }).click();
      // Configuring a provider is a sensitive change: the dialog asks for a fresh proof, then saves.
      await confirmItIsMe(page, { password: ADMIN.password });
      const row = page.getByRole('row', { name: /Corp/ });
      await row.waitFor();
      expect(await row.textContent()).toContain('corp.example, corp.test');
      await page.getByText(`Redirect URI to register at each provider: ${redirectUri}`).waitFor();
      expect(await page.content()).not.toContain(op.clientSecret);

      // Changed without its secret: the saved one stays (and the form never holds it).
      await page.getByRole('link', { name: 'Edit the identity provider Corp' }).click();
      await form.getByLabel('Name').waitFor();
      expect(await form.getByLabel('Client secret').inputValue()).toBe('');
      await form.getByLabel('E-mail domains').fill('corp.example');
      await form.getByLabel('People of these domains may not sign in with a password').check();
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('row', { name: /Corp.*corp\.example.*yes/ }).waitFor();
      const saved = await service.database.db.selectFrom('identity_providers').select(['client_secret_sealed', 'sso_required']).executeTakeFirstOrThrow();
      expect(saved.sso_required).toBe(true);
      expect(saved.client_secret_sealed.includes(Buffer.from(op.clientSecret))).toBe(false);
      await screenshot(page, 'identity-providers');

      // A form made stale by another administrator's change (through the API, between load and
      // save) saves nothing: the 412 is said in words and the form shows the provider as it now is.
      await page.getByRole('link', { name: 'Edit the identity provider Corp' }).click();
      await form.getByRole('heading', { name: 'Edit the identity provider Corp' }).waitFor();
      expect(await form.getByLabel('E-mail domains').inputValue()).toBe('corp.example');
      await form.getByLabel('E-mail domains').fill('corp.example, stale.example');
      const admin = await apiSignIn(service.app, ADMIN.email, ADMIN.password);
      await steppedUp(service.app, admin.access_token, ADMIN.password);
      const { id } = await service.database.db.selectFrom('identity_providers').select('id').executeTakeFirstOrThrow();
      await request(service.app).patch(`/identity-providers/${id}`).set('authorization', `Bearer ${admin.access_token}`).send({ domains: ['corp.example', 'other.example'] }).expect(200);
      await form.getByRole('button', { name: 'Save' }).click();
      // The notice comes with the form rebuilt from the provider as it now is.
      await page.getByText('Someone else changed this record while you were editing it.').waitFor();
      expect(await page.locator('form.panel').getByLabel('E-mail domains').inputValue()).toBe('corp.example, other.example');
      const domains = await service.database.db.selectFrom('identity_provider_domains').select('domain').orderBy('domain').execute();
      expect(domains.map((d) => d.domain)).toEqual(['corp.example', 'other.example']);

      // In French, the same page.
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('heading', { name: 'Fournisseurs d’identité' }).waitFor();
      await page.getByRole('columnheader', { name: 'Mot de passe refusé' }).waitFor();
      await page.getByLabel('Langue').selectOption('en');

      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('link', { name: 'Edit the identity provider Corp' }).click();
      await form.getByRole('button', { name: 'Remove this provider' }).click();
      await page.getByText('No identity provider yet.').waitFor();
      expect(await service.database.db.selectFrom('identity_providers').select('id').execute()).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('a person of the domain signs in with "Sign in with Corp", through the provider\'s login page, into the back office', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const admin = await apiSignIn(service.app, ADMIN.email, ADMIN.password);
    await steppedUp(service.app, admin.access_token, ADMIN.password);
    await request(service.app)
      .post('/identity-providers')
      .set('authorization', `Bearer ${admin.access_token}`)
      .send({ name: 'Corp', issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: ['corp.example'], create_unknown_people: true, scopes: ['openid', 'email', 'profile'] })
      .expect(201);
    op.accounts.set('grace-1', { email: 'grace@corp.example', email_verified: true, given_name: 'Grace', family_name: 'Hopper' });

    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await page.getByLabel('E-mail address').fill('grace@corp.example');
      await page.getByRole('button', { name: 'Sign in with Corp' }).click();
      // The provider's own login page (oidc-provider's development one: any password).
      await page.waitForURL((url) => url.href.startsWith(op.issuer));
      await page.locator('input[name="login"]').fill('grace-1');
      await page.locator('input[name="password"]').fill('whatever the company checks');
      await page.locator('button[type="submit"]').click();
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      expect(new URL(page.url()).pathname).toBe('/');
      await page.getByText('Grace Hopper').first().waitFor();
      const sessions = await service.database.db.selectFrom('sessions').innerJoin('users', 'users.id', 'sessions.user_id').select(['users.email', 'sessions.authentication_method']).where('users.email', '=', 'grace@corp.example').execute();
      expect(sessions).toEqual([{ email: 'grace@corp.example', authentication_method: 'oidc' }]);
    } finally {
      await browser.close();
    }
  });

  it('a person who signs in only through Corp confirms a sensitive change by logging in at Corp again, from the step-up dialog (in French)', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const db = service.database.db;
    if (!(await db.selectFrom('identity_providers').select('id').where('name', '=', 'Corp').executeTakeFirst())) {
      const admin = await apiSignIn(service.app, ADMIN.email, ADMIN.password);
      await steppedUp(service.app, admin.access_token, ADMIN.password);
      await request(service.app)
        .post('/identity-providers')
        .set('authorization', `Bearer ${admin.access_token}`)
        .send({ name: 'Corp', issuer: op.issuer, client_id: op.clientId, client_secret: op.clientSecret, domains: ['corp.example'], create_unknown_people: true, scopes: ['openid', 'email', 'profile'] })
        .expect(201);
    }
    op.accounts.set('linus-1', { email: 'linus@corp.example', email_verified: true, given_name: 'Linus', family_name: 'Pauling' });
    const atProvider = async (page: Page) => {
      await page.waitForURL((url) => url.href.startsWith(op.issuer));
      await page.locator('input[name="login"]').fill('linus-1');
      await page.locator('input[name="password"]').fill('whatever the company checks');
      await page.locator('button[type="submit"]').click();
    };

    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByLabel('E-mail address').fill('linus@corp.example');
      await page.getByRole('button', { name: 'Sign in with Corp' }).click();
      await atProvider(page);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('link', { name: 'Sécurité' }).click();

      // Enrolling an app is a sensitive change; with no password nor factor here, the provider proves it.
      await page.getByRole('button', { name: 'Configurer une application d’authentification' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirmez votre identité' });
      await dialog.getByText('Cette modification est sensible. Reconnectez-vous chez le fournisseur d’identité de votre organisation').waitFor();
      await screenshot(page, 'step-up-oidc-fr');
      await dialog.getByRole('button', { name: 'Continuer chez le fournisseur d’identité' }).click();
      // The provider asks for a new login (prompt=login), then sends the browser back.
      await atProvider(page);
      const back = page.getByRole('dialog', { name: 'Confirmez votre identité' });
      await back.getByText('C’est confirmé : pendant les 5 prochaines minutes, vous pouvez faire des modifications sensibles. Refaites la vôtre.').waitFor();
      expect(new URL(page.url()).pathname).toBe('/');
      expect(new URL(page.url()).hash).toBe('#/security');
      await back.getByRole('button', { name: 'Fermer' }).click();
      // The change made again goes through without a dialog.
      await page.getByRole('button', { name: 'Configurer une application d’authentification' }).click();
      await page.getByTestId('totp-secret').waitFor();
      expect(await page.getByRole('dialog').count()).toBe(0);

      const session = await db
        .selectFrom('sessions')
        .innerJoin('users', 'users.id', 'sessions.user_id')
        .select(['sessions.authentication_method', 'sessions.step_up_method', 'users.id as user_id'])
        .where('users.email', '=', 'linus@corp.example')
        .executeTakeFirstOrThrow();
      expect(session).toMatchObject({ authentication_method: 'oidc', step_up_method: 'oidc' });
      const stepped = await db.selectFrom('security_events').select('details').where('user_id', '=', session.user_id).where('type', '=', 'session_stepped_up').execute();
      expect(stepped.map((e) => e.details)).toEqual([{ method: 'oidc' }]);
    } finally {
      await browser.close();
    }
  });
});
