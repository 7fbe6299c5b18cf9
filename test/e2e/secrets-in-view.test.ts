// Every secret the back office shows once comes into view with the focus in it, on a
// desktop screen and on a phone, wherever the page was scrolled when the person asked for it: a new
// API key's secret and a rotated one, a new webhook endpoint's signing secret and a rotated one,
// the recovery codes after enrolling an authenticator app and after making new ones.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { budget } from '../support/budgets.js';
import { confirmItIsMe, createAdministrator, DESKTOP, openBrowser, PHONE, placement, screenshot, scrollToBottom, signIn, startService } from '../support/e2e.js';
import { totpCode } from '../support/second-factor.js';

let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  // A loopback endpoint (nothing listens there: no delivery is started) needs private addresses allowed.
  service = await startService({ env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' } });
}, budget({ passwordHash: 2 }));
afterAll(() => service?.stop());

/** The panel `panelId` is on the screen, the secret `secretId` in it wholly visible, and the focus inside the panel. */
async function expectRevealed(page: Page, panelId: string, secretId: string): Promise<void> {
  // What the page does on its own once the panel shows: the focus moves into it.
  await page.locator(`[data-testid="${panelId}"]:focus-within`).waitFor();
  const panel = await placement(page, panelId);
  const secret = await placement(page, secretId);
  expect(panel.focusInside, `focus in ${panelId}`).toBe(true);
  expect(panel.top).toBeGreaterThanOrEqual(0);
  expect(panel.top).toBeLessThan(panel.viewportHeight);
  expect(secret.top).toBeGreaterThanOrEqual(0);
  expect(secret.bottom).toBeLessThanOrEqual(secret.viewportHeight);
}

describe.each([
  ['a desktop screen', DESKTOP, 'desktop'],
  ['a phone', PHONE, 'phone'],
] as const)('secrets shown once, on %s', (_, viewport, name) => {
  it('are scrolled into view and focused: API keys, webhook secrets, recovery codes', { timeout: budget({ browserFlow: 1, passwordHash: 2 }) }, async () => {
    const admin = { email: `${name}@example.com`, password: 'correct horse battery staple', firstName: 'Ada', lastName: name };
    await createAdministrator(service.database.db, admin);
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.setViewportSize(viewport);
      await signIn(page, service.baseUrl, admin);
      await page.getByRole('heading', { name: 'Home' }).waitFor();

      // A new API key, created from the bottom of its long form, after the "Confirm it is you" dialog.
      await page.goto(`${service.baseUrl}/#/api-keys`);
      await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
      await page.getByLabel('Name').fill(`Reporting ${name}`);
      await page.getByLabel('users.list', { exact: true }).check();
      await scrollToBottom(page);
      await page.getByRole('button', { name: 'Create the key' }).click();
      await confirmItIsMe(page, { password: admin.password });
      await page.getByText('Copy it now: you will not see it again.').waitFor();
      await expectRevealed(page, 'api-key-secret-panel', 'api-key-secret');
      await screenshot(page, `secret-in-view-api-key-${name}`);
      await page.getByRole('button', { name: 'I have copied it' }).click();

      // Its rotation, asked from the list at the bottom.
      await scrollToBottom(page);
      await page.getByRole('button', { name: `Rotate Reporting ${name}` }).click();
      await page.getByRole('button', { name: 'Issue the new secret' }).click();
      await page.getByText('Copy it now: you will not see it again.').waitFor();
      await expectRevealed(page, 'api-key-secret-panel', 'api-key-secret');
      await page.getByRole('button', { name: 'I have copied it' }).click();

      // A new webhook endpoint's signing secret, and a rotated one.
      await page.goto(`${service.baseUrl}/#/webhooks/new`);
      const create = page.locator('form.panel');
      await create.getByLabel('URL').fill(`http://127.0.0.1:9/${name}`);
      await create.getByLabel('task.created').check();
      await scrollToBottom(page);
      await create.getByRole('button', { name: 'Create the endpoint' }).click();
      await page.getByText('Copy it now: it will not be shown again.').waitFor();
      await expectRevealed(page, 'webhook-secret-panel', 'webhook-secret');
      await page.getByRole('button', { name: 'I have kept it' }).click();
      await page.getByRole('link', { name: `Open the endpoint http://127.0.0.1:9/${name}` }).click();
      await scrollToBottom(page);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Rotate the secret' }).click();
      await page.getByText('Copy it now: it will not be shown again.').waitFor();
      await expectRevealed(page, 'webhook-secret-panel', 'webhook-secret');
      await page.getByRole('button', { name: 'I have kept it' }).click();

      // The recovery codes, after enrolling an authenticator app and after asking for new ones.
      await page.goto(`${service.baseUrl}/#/security`);
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      const key = (await page.getByTestId('totp-secret').textContent())!.trim();
      await page.getByLabel('Code shown by the app').fill(totpCode(key, new Date()));
      await scrollToBottom(page);
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      await expectRevealed(page, 'recovery-codes-panel', 'recovery-codes');
      await screenshot(page, `secret-in-view-recovery-codes-${name}`);
      await page.getByRole('button', { name: 'I have kept them' }).click();
      await scrollToBottom(page);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'New recovery codes' }).click();
      // A password proof stops counting once a factor is enrolled: the next step's code (the enrolment's is used up).
      await confirmItIsMe(page, { code: totpCode(key, new Date(Date.now() + 30_000)) });
      await page.getByRole('heading', { name: 'Your recovery codes' }).waitFor();
      await expectRevealed(page, 'recovery-codes-panel', 'recovery-codes');
    } finally {
      await browser.close();
    }
  });
});
