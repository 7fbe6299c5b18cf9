// The audit page and the home page's sign-ins chart in a real Chromium against the real service:
// the chart is drawn under the page's strict CSP (no violation reported), its numbers are readable
// without the canvas; each event is one readable line in English and French; filters and paging.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, openBrowser, screenshot, signIn, startService, storedTokens, waitForCount, waitForListPage, waitForText, type BrowserSession } from '../support/e2e.js';
import { recordAuditEvent } from '../../src/audit/recorder.js';
import type { AuditContext } from '../../src/audit/events.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const HOUR = 3_600_000;
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;
let adaId: string;

beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
  adaId = (await service.database.db.selectFrom('users').select('id').where('email', '=', ADMIN.email).executeTakeFirstOrThrow()).id;
  const db = service.database.db;
  const anonymous: AuditContext = { actor: { type: 'anonymous' }, requestId: null, ip: '198.51.100.23', userAgent: 'curl/8.5.0' };
  const ada: AuditContext = { actor: { type: 'user', userId: adaId, sessionId: randomUUID() }, requestId: 'r-1', ip: '203.0.113.7', userAgent: 'Firefox' };
  // A week of sign-ins: a working-hours rhythm, a burst of failures, some throttled.
  const now = Date.now();
  for (let h = 167; h >= 1; h--) {
    const at = new Date(now - h * HOUR);
    const busy = at.getUTCHours() >= 8 && at.getUTCHours() < 18;
    for (let i = 0; i < (busy ? 3 + (h % 4) : h % 2); i++) await recordAuditEvent(db, { type: 'sign_in_succeeded', at, context: ada, userId: adaId });
    if (h % 9 === 0) await recordAuditEvent(db, { type: 'sign_in_failed', at, context: anonymous, userId: adaId, target: { type: 'user', id: adaId }, details: { reason: 'wrong_password' } });
    if (h === 30) for (let i = 0; i < 6; i++) await recordAuditEvent(db, { type: 'sign_in_throttled', at, context: anonymous });
  }
  await recordAuditEvent(db, {
    type: 'api_key_rotated',
    at: new Date(now - 60_000),
    context: ada,
    target: { type: 'api_key', id: randomUUID(), label: 'ci-deploy' },
    details: { grace_period_seconds: 3600 },
    changes: { before: { last_characters: '9fQ2' }, after: { last_characters: 'Xb7k' } },
  });
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('audit in the back office', () => {
  it('draws the sign-ins of the last 7 days on the home page under the strict CSP, with the numbers readable as text', async () => {
    const { page } = browser;
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await page.getByRole('heading', { name: 'Sign-ins per hour, last 7 days' }).waitFor();
    await page.locator('.chart canvas').waitFor();
    expect(await page.locator('#chart-summary').textContent()).toMatch(/^Last 7 days: \d+ succeeded, 18 failed, 6 throttled\.$/);
    // The legend uPlot draws names the three series.
    for (const name of ['Succeeded', 'Failed', 'Throttled']) await page.locator('.u-legend').getByText(name).waitFor();
    // My activity: the rotation, as one line.
    await page.getByText('Ada Lovelace rotated key ci-deploy, grace 1 h, from 203.0.113.7').waitFor();
    await screenshot(page, 'sign-in-chart');
    expect(violations).toEqual([]);
  });

  it('lists events one readable line each, filtered and paged, in English and in French', async () => {
    const { page } = browser;
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
    const lines = page.locator('tbody .line');
    // The newest: Ada's sign-in of this test, then the rotation.
    await waitForText(lines.first(), 'Ada Lovelace signed in, from 127.0.0.1');
    expect(await lines.first().textContent()).toBe('Ada Lovelace signed in, from 127.0.0.1');
    const rotation = page.locator('tbody tr[data-event-type="api_key_rotated"]');
    expect(await rotation.locator('.line').textContent()).toBe('Ada Lovelace rotated key ci-deploy, grace 1 h, from 203.0.113.7');
    expect(await rotation.locator('.changes').textContent()).toBe('last characters: 9fQ2 → Xb7k');
    await screenshot(page, 'audit');

    // Failed sign-ins only: 18 of them, 20 a page.
    await page.getByLabel('Event', { exact: true }).selectOption('sign_in_failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitForCount(lines, 18);
    expect(await lines.count()).toBe(18);
    expect(new Set(await lines.allTextContents())).toEqual(new Set(['Failed sign-in as Ada Lovelace (wrong password), from 198.51.100.23']));
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);

    // Everything: page 2 then back to page 1.
    await page.getByLabel('Event', { exact: true }).selectOption('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitForCount(lines, 20);
    expect(await lines.count()).toBe(20);
    const first = await lines.allTextContents();
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitForListPage(page, 2);
    expect((await lines.allTextContents()).join('|') !== first.join('|')).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForListPage(page, 1);
    expect((await lines.allTextContents()).join('|')).toBe(first.join('|'));

    // A real rotation, through the API with the page's own token: recorded, and shown as one line.
    const { accessToken } = await storedTokens(page);
    const api = (path: string, body: object) =>
      fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<{ api_key: { id: string } }>);
    await api('/sessions/current/step-up', { password: ADMIN.password }); // creating and rotating a key are sensitive changes
    const { api_key: key } = await api('/api-keys', { name: 'reporting', permissions: ['users.list'] });
    await api(`/api-keys/${key.id}/rotate`, { grace_period_seconds: 86_400 });
    await page.getByLabel('Event', { exact: true }).selectOption('api_key_rotated');
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitForText(lines.first(), 'Ada Lovelace rotated key reporting, grace 24 h, from 127.0.0.1');
    expect(await lines.first().textContent()).toBe('Ada Lovelace rotated key reporting, grace 24 h, from 127.0.0.1');

    await page.getByLabel('Language').selectOption('fr');
    await waitForText(lines.first(), 'Ada Lovelace a renouvelé la clé reporting, délai de grâce 24 h, depuis 127.0.0.1');
    expect(await lines.first().textContent()).toBe('Ada Lovelace a renouvelé la clé reporting, délai de grâce 24 h, depuis 127.0.0.1');
    expect(await rotation.nth(1).locator('.line').textContent()).toBe('Ada Lovelace a renouvelé la clé ci-deploy, délai de grâce 1 h, depuis 203.0.113.7');
    await page.getByLabel('Langue').selectOption('en');
  });
});
