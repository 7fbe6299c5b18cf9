// Changing one's e-mail address in a real Chromium against the real service: the person asks on
// the "E-mail address" page (with a fresh proof, the password), the link sent to the new address
// is opened in another browser, signed out: the sign-in page comes first, then the link's page,
// where the change is confirmed. In French too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budget } from '../support/budgets.js';
import { createAdministrator, confirmItIsMe, openBrowser, signIn, startService } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService({ host: 'localhost', env: (baseUrl) => ({ PASSKEY_ORIGINS: baseUrl }) });
  await createAdministrator(service.database.db, ADMIN);
});
afterAll(() => service?.stop());

/** The link of the newest message to `to` (the outbox: the development mailbox delivers by marking). */
async function linkTo(to: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const message = await service.database.db.selectFrom('messages').select('body').where('recipient', '=', to).orderBy('created_at', 'desc').executeTakeFirst();
    const link = message && /https?:\/\/\S+#\/email\/\S+/.exec(message.body)?.[0];
    if (link) return link;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no link was sent to ${to}`);
}

describe('my e-mail address', () => {
  it('asked on the page, the link opened signed out in another browser: signed in, then confirmed; the new address signs in', { timeout: budget({ browserFlow: 3 }) }, async () => {
    const first = await openBrowser();
    const second = await openBrowser();
    try {
      await signIn(first.page, service.baseUrl, ADMIN);
      await first.page.getByRole('link', { name: 'E-mail address' }).click();
      await first.page.getByRole('heading', { name: 'My e-mail address' }).waitFor();
      await first.page.getByText('Messages are sent to ada@example.com.').waitFor();
      await first.page.getByLabel('New address').fill('ada.lovelace@example.org');
      await first.page.getByRole('button', { name: 'Send the link' }).click();
      await confirmItIsMe(first.page, { password: ADMIN.password });
      await first.page.getByText('A link was sent to ada.lovelace@example.org.').waitFor();

      const link = await linkTo('ada.lovelace@example.org');
      expect(link.startsWith(`${service.baseUrl}/#/email/boe_`)).toBe(true);
      await second.page.goto(link);
      // Signed out: the sign-in page, and after it the page the link opens.
      await signIn(second.page, service.baseUrl, ADMIN);
      await second.page.getByText('You followed the link sent to your new address.').waitFor();
      await second.page.getByRole('button', { name: 'Confirm my new address' }).click();
      await second.page.getByText('Your address is now ada.lovelace@example.org. Your previous address was told.').waitFor();
      // The token leaves the address bar once spent.
      expect(second.page.url()).toBe(`${service.baseUrl}/#/email`);
      const row = await service.database.db.selectFrom('users').select('email').where('email', '=', 'ada.lovelace@example.org').executeTakeFirst();
      expect(row).toBeDefined();
    } finally {
      await first.close();
      await second.close();
    }
  });

  it('is in French, and a link replaced by a newer one says so in French', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByLabel('Language').selectOption('fr');
      await page.getByLabel('Adresse e-mail').fill('ada.lovelace@example.org');
      await page.getByLabel('Mot de passe').fill(ADMIN.password);
      await page.getByRole('button', { name: 'Se connecter', exact: true }).click();
      await page.getByRole('link', { name: 'Adresse e-mail' }).click();
      await page.getByRole('heading', { name: 'Mon adresse e-mail' }).waitFor();
      await page.getByText('Les messages sont envoyés à ada.lovelace@example.org.').waitFor();
      for (const address of ['countess@example.org', 'augusta@example.org']) {
        await page.getByLabel('Nouvelle adresse').fill(address);
        await page.getByRole('button', { name: 'Envoyer le lien' }).click();
        if (address === 'countess@example.org') {
          // A sensitive change: the dialog asks for the password, in French.
          const dialog = page.getByRole('dialog', { name: 'Confirmez votre identité' });
          await dialog.getByLabel('Votre mot de passe').fill(ADMIN.password);
          await dialog.getByRole('button', { name: 'Confirmer' }).click();
          await dialog.waitFor({ state: 'detached' });
        }
        await page.getByText(`Un lien a été envoyé à ${address}.`).waitFor();
      }
      await page.goto(await linkTo('countess@example.org'));
      await page.getByRole('button', { name: 'Confirmer ma nouvelle adresse' }).click();
      await page.getByRole('alert').filter({ hasText: 'Ce lien est inconnu, déjà utilisé, remplacé ou expiré ; demandez-en un nouveau.' }).waitFor();
    } finally {
      await browser.close();
    }
  });
});
