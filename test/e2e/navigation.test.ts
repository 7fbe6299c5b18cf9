// The navigation in a real Chromium at 1280 px: grouped in labelled sections (a column beside the
// page, so new pages lengthen it instead of wrapping the header), every link on screen at once and
// reached with the keyboard alone, in reading order, after the skip link lets one pass it by.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budget } from '../support/budgets.js';
import { createAdministrator, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { declaredLinks, declaredSections } from '../support/navigation.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
});
afterAll(() => service.stop());

const SECTIONS = declaredSections();
const ALL = declaredLinks();

it('declares the sections the back office has always had, in order, tasks first', () => {
  expect(SECTIONS.map(([section]) => section)).toEqual(['Work', 'People and access', 'Activity', 'My account']);
  expect(SECTIONS[0]![1][0]).toBe('Tasks');
});

describe('the navigation', () => {
  it('groups the pages in labelled sections, all on screen at 1280 px, the header on one row', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Main' });
      for (const [section, links] of SECTIONS) {
        expect(await nav.getByRole('group', { name: section }).getByRole('link').allTextContents()).toEqual(links);
      }
      const all = ALL;
      expect(await nav.getByRole('link').allTextContents()).toEqual(all);
      const viewport = page.viewportSize()!;
      for (const name of all) {
        const box = (await nav.getByRole('link', { name, exact: true }).boundingBox())!;
        expect(box.y + box.height, name).toBeLessThanOrEqual(viewport.height);
        expect(box.x + box.width, name).toBeLessThanOrEqual(viewport.width);
      }
      // The header holds the brand, the person and the language: one row, not two.
      const header = (await page.locator('header.shell').boundingBox())!;
      expect(header.height).toBeLessThan(70);
      await screenshot(page, 'navigation');

      await page.getByLabel('Language').selectOption('fr');
      const navFr = page.getByRole('navigation', { name: 'Principale' });
      await navFr.getByRole('group', { name: 'Personnes et accès' }).getByRole('link', { name: 'Utilisateurs' }).waitFor();
      expect(await navFr.getByRole('group', { name: 'Mon compte' }).getByRole('link').allTextContents()).toEqual(declaredSections('fr').find(([section]) => section === 'Mon compte')![1]);
    } finally {
      await browser.close();
    }
  });

  it('is walked with the keyboard in reading order, and the current page is marked', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      // A page that opens puts the focus on its heading (after painting): wait for that before walking,
      // or it lands in the middle of the walk.
      await page.locator('main h1:focus').waitFor();
      const focused = () => page.evaluate<string>('document.activeElement.textContent');
      // From the sign-out button (the header's last control), Tab enters the navigation.
      await page.getByRole('button', { name: 'Sign out' }).focus();
      const order: string[] = [];
      for (let i = 0; i < ALL.length; i++) {
        await page.keyboard.press('Tab');
        order.push(await focused());
      }
      expect(order).toEqual(ALL);
      // Back to Users, Enter opens the page and the link says so.
      for (let i = 0; i < ALL.length - 1 - ALL.indexOf('Users'); i++) await page.keyboard.press('Shift+Tab');
      expect(await focused()).toBe('Users');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      const current = page.getByRole('navigation', { name: 'Main' }).locator('a[aria-current="page"]');
      expect(await current.allTextContents()).toEqual(['Users']);
    } finally {
      await browser.close();
    }
  });
});
