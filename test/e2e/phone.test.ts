// The back office on a phone (390x844), in English and in French: on every page nothing
// is wider than the screen (a wide table scrolls inside its own box), the header fits with "Sign
// out" on screen, and the navigation is folded behind a Menu button that opens it, so its links do
// not fill the first screen.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { budget } from '../support/budgets.js';
import { declaredLinks, declaredRoutes } from '../support/navigation.js';
import { confirmItIsMe, createAdministrator, openBrowser, PHONE, screenshot, signIn, startService, storedTokens, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'ada.lovelace.of.the.analytical.engine@example.com', password: 'correct horse battery staple', firstName: 'Augusta Ada', lastName: 'King-Noel, Countess of Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  service = await startService({ env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' } });
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser();
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const WORDS = {
  en: { menu: 'Menu', signOut: 'Sign out', nav: 'Main' },
  fr: { menu: 'Menu', signOut: 'Se déconnecter', nav: 'Principale' },
} as const;

/** The widths the page has and needs (scrollWidth wider than innerWidth: the page scrolls sideways). */
const widths = (page: Page) => page.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');

/** The outermost elements that reach past the right edge (what to fix when a page is too wide). */
const overflowing = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('body *')]
    .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5 && !el.closest('.table-scroll') && !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 0.5))
    .map((el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' ' + Math.round(el.getBoundingClientRect().right))`);

async function checkPage(page: Page, route: string, language: 'en' | 'fr'): Promise<void> {
  const words = WORDS[language];
  await page.goto(`${service.baseUrl}/#/${route}`);
  // The page has what it loads: its heading, and nothing left loading.
  await page.locator('main h1').waitFor();
  await page.locator('main .loading').first().waitFor({ state: 'detached' });
  const { scrollWidth, innerWidth } = await widths(page);
  if (scrollWidth > innerWidth) expect.fail(`${route} (${language}) is ${scrollWidth} px wide on a ${innerWidth} px screen: ${(await overflowing(page)).join(', ')}`);

  const signOut = page.getByRole('banner').getByRole('button', { name: words.signOut, exact: true });
  const box = (await signOut.boundingBox())!;
  expect(box, `${route} (${language}): Sign out is shown`).not.toBeNull();
  expect(box.x + box.width, `${route} (${language}): Sign out is on screen`).toBeLessThanOrEqual(innerWidth);

  // The navigation is folded: its links are not on the first screen until the Menu button opens it.
  const menu = page.getByRole('button', { name: words.menu });
  expect(await menu.getAttribute('aria-expanded')).toBe('false');
  const nav = page.getByRole('navigation', { name: words.nav });
  expect(await nav.isVisible()).toBe(false);
  await menu.click();
  await nav.waitFor();
  expect(await menu.getAttribute('aria-expanded')).toBe('true');
  const links = nav.getByRole('link');
  expect(await links.count()).toBe(declaredLinks(language).length);
  const { scrollWidth: openWidth } = await widths(page);
  expect(openWidth, `${route} (${language}) with the menu open`).toBeLessThanOrEqual(innerWidth);
  await menu.click();
  await nav.waitFor({ state: 'hidden' });
}

describe('the back office on a phone', () => {
  it('fits every page on a 390 px screen, with the menu behind a button and Sign out in view, in English and French', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const { page } = browser;
    await page.setViewportSize(PHONE);
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();

    // Something in every table: a task, an API key (made in the page: the step-up), a webhook endpoint.
    const { accessToken } = await storedTokens(page);
    const post = (path: string, body: unknown) =>
      fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    const task = (await (await post('/tasks', { title: 'Prepare the quarterly budget review for the board of directors', priority: 'high' })).json()) as { id: string };
    await page.goto(`${service.baseUrl}/#/api-keys`);
    await page.getByLabel('Name').fill('Reporting for the finance department');
    await page.getByLabel('users.list', { exact: true }).check();
    await page.getByRole('button', { name: 'Create the key' }).click();
    await confirmItIsMe(page, { password: ADMIN.password });
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const keys = (await (await fetch(`${service.baseUrl}/api-keys`, { headers: { Authorization: `Bearer ${accessToken}` } })).json()) as { data: { id: string }[] };
    const endpoint = (await (await post('/webhook-endpoints', { url: 'http://127.0.0.1:9/a/rather/long/path/for/the/calendar/mirror', event_types: ['task.created'] })).json()) as { webhook_endpoint: { id: string } };
    const users = (await (await fetch(`${service.baseUrl}/users`, { headers: { Authorization: `Bearer ${accessToken}` } })).json()) as { data: { id: string }[] };

    const routes = [
      'home',
      'tasks',
      `tasks/${task.id}`,
      'tasks/new',
      'meetings',
      'users',
      `users/${users.data[0]!.id}`,
      'users/new',
      'invitations',
      'roles',
      'roles/new',
      'api-keys',
      `api-keys/${keys.data[0]!.id}`,
      'identity-providers',
      'identity-providers/new',
      'webhooks',
      `webhooks/${endpoint.webhook_endpoint.id}`,
      'audit',
      'sessions',
      'security',
      'password',
    ];
    // Every page of the navigation, a new one included.
    for (const route of declaredRoutes()) if (!routes.includes(route)) routes.push(route);
    for (const language of ['en', 'fr'] as const) {
      if (language === 'fr') await page.getByLabel('Language').selectOption('fr');
      for (const route of routes) await checkPage(page, route, language);
    }
    await page.goto(`${service.baseUrl}/#/tasks`);
    await page.locator('main h1').waitFor();
    await screenshot(page, 'phone-tasks');

    // The menu takes the person to a page, and closes.
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Principale' }).getByRole('link', { name: 'Utilisateurs' }).click();
    await page.getByRole('heading', { name: 'Utilisateurs', level: 1 }).waitFor();
    await page.getByRole('navigation', { name: 'Principale' }).waitFor({ state: 'hidden' });
    await page.getByLabel('Langue').selectOption('en');
  });
});
