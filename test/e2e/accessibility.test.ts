// Every page of the back office checked by axe-core (the engine of Lighthouse and of the browsers'
// accessibility audits) in real Chromium, at 1280 and 390 px wide, each in English and in French:
// no violation of WCAG 2.1 A or AA rules of "serious" or "critical" impact. A failure names the
// rule, the page and the elements, so the fix is where it points.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { budget } from '../support/budgets.js';
import { DESKTOP, PHONE, createAdministrator, openBrowser, signIn, startService, storedTokens, type BrowserSession } from '../support/e2e.js';

// Evaluated through the DevTools protocol: the page's Content-Security-Policy refuses inline scripts, as it should.
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const ADMIN = { email: 'grace.hopper@example.com', password: 'correct horse battery staple', firstName: 'Grace', lastName: 'Hopper' };
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

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe's serious and critical findings on the page as it stands, as lines naming the rule and the elements. */
async function violations(page: Page, where: string): Promise<string[]> {
  if (!(await page.evaluate('typeof window.axe !== "undefined"'))) await page.evaluate(AXE_SOURCE);
  const found = await page.evaluate<Violation[]>(`axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } }).then((r) => r.violations)`);
  return found
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${where}: ${v.id} (${v.impact}) ${v.help}: ${v.nodes.slice(0, 5).map((n) => n.target.join(' ')).join(', ')}`);
}

async function openRoute(page: Page, route: string): Promise<void> {
  await page.goto(`${service.baseUrl}/#/${route}`);
  await page.locator('main h1').waitFor();
  await page.locator('main .loading').first().waitFor({ state: 'detached' });
}

describe('accessibility of the back office', () => {
  it('the sign-in page and every page behind it pass axe-core WCAG 2.1 AA (serious and critical), at both widths in both languages', { timeout: budget({ browserFlow: 4 }) }, async () => {
    const { page } = browser;
    const found: string[] = [];
    await page.setViewportSize(DESKTOP);
    await page.goto(`${service.baseUrl}/`);
    await page.getByLabel('Password').waitFor();
    found.push(...(await violations(page, 'sign-in')));

    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    const { accessToken } = await storedTokens(page);
    const get = async (path: string) => (await (await fetch(`${service.baseUrl}${path}`, { headers: { Authorization: `Bearer ${accessToken}` } })).json()) as { data: { id: string }[] };
    const task = (await (await fetch(`${service.baseUrl}/tasks`, { method: 'POST', headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'Check the colour contrast', priority: 'high' }) })).json()) as { id: string };
    const users = await get('/users');

    const routes = ['home', 'tasks', `tasks/${task.id}`, 'tasks/new', 'meetings', 'users', `users/${users.data[0]!.id}`, 'users/new', 'invitations', 'roles', 'roles/new', 'api-keys', 'identity-providers', 'identity-providers/new', 'webhooks', 'audit', 'sessions', 'security', 'password'];
    for (const [language, viewport] of [['en', DESKTOP], ['en', PHONE], ['fr', PHONE], ['fr', DESKTOP]] as const) {
      await page.setViewportSize(viewport);
      if (language === 'fr' && viewport === PHONE) await page.getByLabel('Language').selectOption('fr');
      for (const route of routes) {
        await openRoute(page, route);
        found.push(...(await violations(page, `${route} (${language}, ${viewport.width} px)`)));
      }
    }
    await page.getByLabel('Langue').selectOption('en');
    expect(found, found.join('\n')).toEqual([]);
  });
});
