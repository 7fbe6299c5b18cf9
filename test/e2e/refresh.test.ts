// Token refresh seen from the browser, with the server on a ManualClock that this test process
// owns (the app is built in-process by test/support; no request can move a server's clock).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { createAdministrator, openBrowser, readStorage, screenshot, signIn, startService, storedTokens, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const clock = new ManualClock(new Date());
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  service = await startService({ clock });
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const me = (accessToken: string) => fetch(`${service.baseUrl}/me`, { headers: { Accept: 'application/json', Authorization: `Bearer ${accessToken}` } });

describe('token refresh in the page', () => {
  it('refreshes silently when the server says the access token has expired, and the page carries on', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    const before = await storedTokens(page);

    clock.advance(11 * 60_000);
    expect((await me(before.accessToken)).status).toBe(401);

    const refreshes: number[] = [];
    page.on('response', (res) => {
      if (res.url().endsWith('/tokens') && res.request().method() === 'POST') refreshes.push(res.status());
    });
    await page.getByRole('link', { name: 'My sessions' }).click();
    await page.getByText('this session').waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(refreshes).toEqual([201]);

    const after = await storedTokens(page);
    expect(after.accessToken).not.toBe(before.accessToken);
    expect(after.refreshToken).not.toBe(before.refreshToken);
    expect((await me(after.accessToken)).status).toBe(200);
  });

  it('returns to the sign-in page with a message when the refresh is refused', async () => {
    const { page } = browser;
    const { accessToken } = await storedTokens(page);
    // The session is revoked behind the page's back (as "sign out everywhere else" in another browser would).
    const revoked = await fetch(`${service.baseUrl}/sessions/current`, { method: 'DELETE', headers: { Authorization: `Bearer ${accessToken}` } });
    expect(revoked.ok).toBe(true);

    await page.getByRole('link', { name: 'Password' }).click();
    await page.getByRole('link', { name: 'My sessions' }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await page.getByText('Your session has ended. Please sign in again.').waitFor();
    await screenshot(page, 'session-ended');
    expect(await readStorage(page, 'backoffice.tokens')).toBeNull();
  });

  it('refreshes on its own a minute before the 10 minutes run out, with the page left idle', async () => {
    const idle = await openBrowser();
    try {
      const { page } = idle;
      await page.clock.install();
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      const before = await storedTokens(page);
      const refreshed = page.waitForResponse((res) => res.url().endsWith('/tokens') && res.request().method() === 'POST');
      clock.advance(9 * 60_000 + 5_000);
      await page.clock.fastForward('09:05');
      expect((await refreshed).status()).toBe(201);
      // The page stores the new set as the answer arrives (the page's clock is stopped: no polling in it).
      while ((await storedTokens(page)).accessToken === before.accessToken);
      expect((await storedTokens(page)).accessToken).not.toBe(before.accessToken);
      // Past the old token's 10 minutes, the new one still works.
      clock.advance(2 * 60_000);
      expect((await me(before.accessToken)).status).toBe(401);
      expect((await me((await storedTokens(page)).accessToken)).status).toBe(200);
    } finally {
      await idle.close();
    }
  });
});
