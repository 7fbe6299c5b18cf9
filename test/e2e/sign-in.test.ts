// The sign-in page in a real Chromium against the real service: labelled fields, the server's
// own words on failure, keyboard use with a visible focus ring, English/French from the browser
// with a switch that sticks.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, screenshot, startService, waitForText } from '../support/e2e.js';

let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

describe('sign-in page', () => {
  it('shows labelled fields and, on failure, the detail the server answered', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await screenshot(page, 'sign-in');

      const credentials = { email: 'nobody@example.com', password: 'not the right password' };
      const expected = await fetch(`${service.baseUrl}/sessions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify({ session: credentials }),
      }).then((res) => res.json() as Promise<{ detail: string }>);

      await page.getByLabel('E-mail address').fill(credentials.email);
      await page.getByLabel('Password').fill(credentials.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await waitForText(page.getByRole('alert'), expected.detail);
      expect(await page.getByRole('alert').textContent()).toBe(expected.detail);
      await screenshot(page, 'sign-in-error');
    } finally {
      await browser.close();
    }
  });

  it('can be used with the keyboard alone, with a visible focus', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      const focused = () =>
        page.evaluate<{ id: string; text: string; outline: string }>(`(() => {
          const el = document.activeElement;
          const style = getComputedStyle(el);
          return { id: el.id, text: el.textContent, outline: style.outlineStyle + ' ' + style.outlineWidth };
        })()`);
      // The page's heading holds the focus when a page opens (after painting: wait for it); the form comes next.
      await page.locator('h1:focus').waitFor();
      expect(await focused()).toMatchObject({ text: 'Sign in' });
      await page.keyboard.press('Shift+Tab');
      expect((await focused()).id).toBe('language');
      await page.keyboard.press('Shift+Tab');
      expect((await focused()).text).toBe('Skip to content');
      await page.keyboard.press('Enter');
      expect((await focused()).id).toBe('main');
      await page.keyboard.press('Tab');
      const email = await focused();
      expect(email.id).toBe('email');
      expect(email.outline).toBe('solid 3px');
      await page.keyboard.type('nobody@example.com');
      await page.keyboard.press('Tab');
      expect((await focused()).id).toBe('password');
      await page.keyboard.type('not the right password');
      const answered = page.waitForResponse((res) => res.url().endsWith('/sessions') && res.request().method() === 'POST');
      await page.keyboard.press('Enter');
      expect((await answered).status()).toBeGreaterThanOrEqual(400);
      await page.getByRole('alert').waitFor();
    } finally {
      await browser.close();
    }
  });

  it('speaks French to a French browser, and the switch changes and remembers the language', async () => {
    const browser = await openBrowser({ locale: 'fr-FR' });
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('heading', { name: 'Connexion' }).waitFor();
      expect(await page.getAttribute('html', 'lang')).toBe('fr');
      await page.getByLabel('Adresse e-mail').waitFor();
      await screenshot(page, 'sign-in-fr');
      await page.getByLabel('Langue').selectOption('en');
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      await page.reload();
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      expect(await page.getAttribute('html', 'lang')).toBe('en');
    } finally {
      await browser.close();
    }
  });

  it('says how long to wait when sign-in is throttled (429)', async () => {
    const email = 'throttled@example.com';
    const attempt = () =>
      fetch(`${service.baseUrl}/sessions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ session: { email, password: 'not the right password' } }),
      });
    let last = await attempt();
    for (let i = 0; i < 20 && last.status !== 429; i++) last = await attempt();
    expect(last.status).toBe(429);
    const wait = Number(last.headers.get('Retry-After'));

    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByLabel('E-mail address').fill(email);
      await page.getByLabel('Password').fill('not the right password');
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('alert').filter({ hasText: /^Too many attempts\. Try again in \d+ seconds\.$/ }).waitFor();
      expect(await page.getByRole('alert').textContent()).toMatch(/^Too many attempts\. Try again in \d+ seconds\.$/);
      const shown = Number(/in (\d+) seconds/.exec((await page.getByRole('alert').textContent())!)![1]);
      expect(shown).toBeGreaterThan(0);
      expect(shown).toBeLessThanOrEqual(wait);
      await screenshot(page, 'sign-in-throttled');
    } finally {
      await browser.close();
    }
  });
});
