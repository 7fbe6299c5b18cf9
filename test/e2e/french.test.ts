// The back office in French goes past the server: a problem is said by its stable code
// in the person's language (the API's detail stays English), a local webhook URL's refusal says
// what to do, and dates go through Intl (the chart's legend, the week's days in lower case as
// French writes them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budget } from '../support/budgets.js';
import { confirmItIsMe, createAdministrator, openBrowser, screenshot, signIn, startService, waitForText, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  // The default: private webhook addresses refused (WEBHOOKS_ALLOW_PRIVATE_URLS unset).
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('the back office in French', () => {
  it('says a problem by its code in the person\'s language, and a refused local webhook URL says what to do', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();

    // A user with Ada's own e-mail: 409 email_taken, said in English, then in French once the language changes.
    await page.goto(`${service.baseUrl}/#/users/new`);
    await page.getByLabel('E-mail').fill(ADMIN.email);
    await page.getByLabel('First name').fill('Ada');
    await page.getByLabel('Last name').fill('Again');
    await page.getByRole('button', { name: 'Create' }).click();
    await confirmItIsMe(page, { password: ADMIN.password });
    const alert = page.getByRole('alert');
    await waitForText(alert, 'Another user already has this e-mail address.');
    await page.getByLabel('Language').selectOption('fr');
    await waitForText(alert, 'Un autre utilisateur a déjà cette adresse e-mail.');
    expect(await alert.textContent()).toBe('Un autre utilisateur a déjà cette adresse e-mail.');
    await screenshot(page, 'french-problem');

    // A webhook on this machine: refused, with the setting that allows it named, in French and in English.
    await page.goto(`${service.baseUrl}/#/webhooks/new`);
    const create = page.locator('form.panel');
    await create.getByLabel('URL').fill('http://127.0.0.1:8080/hooks');
    await create.getByLabel('task.created').check();
    await create.getByRole('button', { name: 'Créer le point de terminaison' }).click();
    await alert.filter({ hasText: 'WEBHOOKS_ALLOW_PRIVATE_URLS=true' }).waitFor();
    expect(await alert.textContent()).toContain('Cette URL est refusée : elle doit utiliser https');
    await page.getByLabel('Langue').selectOption('en');
    await alert.filter({ hasText: 'This URL is refused: it must use https' }).waitFor();
    expect(await alert.textContent()).toContain('WEBHOOKS_ALLOW_PRIVATE_URLS=true');
  });

  it('writes dates through Intl: the chart\'s legend in French, the week\'s days in lower case', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await page.goto(`${service.baseUrl}/#/home`);
    await page.getByLabel('Language').selectOption('fr');
    await page.getByRole('heading', { name: 'Connexions par heure, 7 derniers jours' }).waitFor();
    // Pointing at the chart names the hour in the legend, as Intl writes it in French ("28 nov. 2026, 14:00").
    const over = page.locator('.chart .u-over');
    await over.hover();
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width - 3, box.y + box.height / 2, { steps: 5 });
    const hour = page.locator('.u-legend .u-series').first().locator('.u-value');
    await hour.filter({ hasText: /\d/ }).waitFor();
    expect(await hour.textContent()).toMatch(/^\d{1,2} [a-zéû]+\.? \d{4}/);
    expect(await page.locator('.u-legend').textContent()).toContain('Heure');

    await page.goto(`${service.baseUrl}/#/meetings`);
    const days = page.locator('ol.week h3');
    await days.first().waitFor();
    // As shown (innerText applies the page's CSS): "lundi 23 novembre", not "Lundi 23 Novembre".
    const shown = await days.allInnerTexts();
    expect(shown).toHaveLength(7);
    for (const day of shown) expect(day, day).toMatch(/^(lundi|mardi|mercredi|jeudi|vendredi|samedi|dimanche) \d{1,2} [a-zéû]+/);
    await page.getByLabel('Langue').selectOption('en');
  });
});
