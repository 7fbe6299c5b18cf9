// The second factor in a real Chromium against the real service, with the default policy
// (administrators must have one): an administrator signs in, is led to the Security page, enrols
// an authenticator app from the key the page shows (the code computed here, as the app would),
// keeps the recovery codes, and next time signs in with the password and a code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmItIsMe, createAdministrator, openBrowser, screenshot, signIn, startService, storedTokens, waitForCount } from '../support/e2e.js';
import { totpCode } from '../support/second-factor.js';
import { budget } from '../support/budgets.js';

let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService({ env: { ADMIN_SECOND_FACTOR: undefined } });
});
afterAll(() => service.stop());

const admin = { email: 'grace@example.com', password: 'a long administrator passphrase', firstName: 'Grace', lastName: 'Hopper' };

/** The key the Security page showed, kept by the first test for the second (as the phone would). */
let secret = '';

describe('second factor in the back office', () => {
  it('leads an administrator through enrolling an authenticator app and keeping the recovery codes', { timeout: budget({ browserFlow: 1 }) }, async () => {
    await createAdministrator(service.database.db, admin);
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, admin);
      // Nothing else is open until a second factor is enrolled.
      await page.getByRole('heading', { name: 'Security' }).waitFor();
      await page.getByText('Your role requires a second factor.').waitFor();
      await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
      // Enrolling is a sensitive change: with no second factor yet, the password proves it is them.
      await confirmItIsMe(page, { password: admin.password });
      await page.getByRole('img', { name: 'QR code of the key for your authenticator app' }).waitFor();
      secret = (await page.getByTestId('totp-secret').textContent())!.trim();
      expect(secret).toMatch(/^[A-Z2-7]{32}$/);
      await screenshot(page, 'security-enrol-totp');
      await page.getByLabel('Code shown by the app').fill(totpCode(secret, new Date()));
      await page.getByRole('button', { name: 'Confirm' }).click();
      const codes = page.getByTestId('recovery-codes').getByRole('listitem');
      await waitForCount(codes, 10);
      expect(await codes.count()).toBe(10);
      // Enrolled: the page no longer says nothing else is available.
      await page.getByText('Your second factor is set up. Keep your recovery codes, then continue to the back office.').waitFor();
      expect(await page.getByText('until then nothing else is available').count()).toBe(0);
      await screenshot(page, 'security-recovery-codes');
      await page.getByRole('button', { name: 'I have kept them' }).click();
      // The back office opens.
      await page.getByRole('link', { name: 'Users' }).waitFor();
    } finally {
      await browser.close();
    }
  });

  it('asks for a code from the app after the password', { timeout: budget({ browserFlow: 1 }) }, async () => {
    expect(secret).not.toBe('');
    const browser = await openBrowser();
    try {
      const { page } = browser;
      // The code of the next step: the one of the enrolment is used up.
      await signIn(page, service.baseUrl, admin);
      await page.getByRole('heading', { name: 'Second step' }).waitFor();
      await screenshot(page, 'sign-in-second-step');
      await page.getByLabel('Code from the app').fill(totpCode(secret, new Date(Date.now() + 30_000)));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('link', { name: 'Users' }).waitFor();
      const { accessToken } = await storedTokens(page);
      const sessions = await fetch(`${service.baseUrl}/sessions`, { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.json() as Promise<{ data: { current: boolean; authentication_method: string }[] }>);
      expect(sessions.data.find((s) => s.current)?.authentication_method).toBe('password_totp');
    } finally {
      await browser.close();
    }
  });
});
