// My sessions and my password in a real Chromium against the real service on PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, openBrowser, readStorage, screenshot, signIn, startService, storedTokens, waitForCount, type BrowserSession } from '../support/e2e.js';
import { createUserWithPassword } from '../../src/users/credentials.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const get = (path: string, headers: Record<string, string>) => fetch(`${service.baseUrl}${path}`, { headers: { Accept: 'application/json', ...headers } });

describe('my sessions and my password', () => {
  it('lists my sessions with the current one marked, revokes another, and changes my password', async () => {
    // A second session, opened from elsewhere.
    const other = await fetch(`${service.baseUrl}/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'curl/8.5.0' },
      body: JSON.stringify({ session: { email: ADMIN.email, password: ADMIN.password } }),
    }).then((res) => res.json() as Promise<{ access_token: string }>);
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'My sessions' }).click();
    await page.getByRole('heading', { name: 'My sessions' }).waitFor();
    await page.getByText('this session').waitFor();
    await screenshot(page, 'sessions');
    await page.getByRole('row', { name: /curl/ }).getByRole('button', { name: /Revoke/ }).click();
    await page.getByRole('row', { name: /curl/ }).waitFor({ state: 'detached' });
    expect(await page.getByRole('row', { name: /curl/ }).count()).toBe(0);
    expect((await get('/me', { Authorization: `Bearer ${other.access_token}` })).status).toBe(401);

    await page.getByRole('link', { name: 'Password' }).click();
    await page.getByLabel('Current password').fill(ADMIN.password);
    // Long enough for the form, refused by the server's common-password check: its words are shown.
    await page.getByLabel('New password', { exact: true }).fill('password1234');
    await page.getByLabel('New password again').fill('password1234');
    await page.getByRole('button', { name: 'Change my password' }).click();
    await page.getByRole('alert').filter({ hasText: 'too common' }).waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('too common');
    const newPassword = 'a brand new passphrase for ada';
    await page.getByLabel('New password', { exact: true }).fill(newPassword);
    await page.getByLabel('New password again').fill(newPassword);
    await page.getByRole('button', { name: 'Change my password' }).click();
    await page.getByText('Your password is changed.').waitFor();
    await screenshot(page, 'password');
    const signInWithNew = await fetch(`${service.baseUrl}/sessions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ session: { email: ADMIN.email, password: newPassword } }),
    });
    expect(signInWithNew.status).toBe(201);
  });

  it('signs out everywhere else: every other session ends, this one goes on', async () => {
    const others = await Promise.all(
      ['curl/8.5.0', 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/130.0'].map((agent) =>
        fetch(`${service.baseUrl}/sessions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'User-Agent': agent },
          body: JSON.stringify({ session: { email: ADMIN.email, password: 'a brand new passphrase for ada' } }),
        }).then((res) => res.json() as Promise<{ access_token: string }>),
      ),
    );
    const { page } = browser;
    await page.getByRole('link', { name: 'My sessions' }).click();
    await page.getByRole('row', { name: /Firefox · Windows/ }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Sign out everywhere else' }).click();
    await page.getByText('Your other sessions are signed out.').waitFor();
    await waitForCount(page.getByRole('row'), 2);
    expect(await page.getByRole('row').count()).toBe(2); // the header row and this session
    for (const other of others) expect((await get('/me', { Authorization: `Bearer ${other.access_token}` })).status).toBe(401);
    const { accessToken } = await storedTokens(page);
    expect((await get('/me', { Authorization: `Bearer ${accessToken}` })).status).toBe(200);
  });

  it('signs out from the header: the session ends on the server and the page forgets the tokens', async () => {
    const { page } = browser;
    const { accessToken } = await storedTokens(page);
    expect((await get('/me', { Authorization: `Bearer ${accessToken}` })).status).toBe(200);
    await page.getByRole('banner').getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await page.getByText('You are signed out.').waitFor();
    expect((await get('/me', { Authorization: `Bearer ${accessToken}` })).status).toBe(401);
    expect(await readStorage(page, 'backoffice.tokens')).toBeNull();
  });

  it('leads a person whose password someone else set to the form, and opens the back office once they chose their own', async () => {
    const person = { email: 'newcomer@example.com', password: 'set by the administrator' };
    await createUserWithPassword(service.database.db, { ...person, firstName: 'New', lastName: 'Comer', roles: ['admin'], mustChangePassword: true });
    const fresh = await openBrowser();
    try {
      const { page } = fresh;
      await signIn(page, service.baseUrl, person);
      await page.getByRole('heading', { name: 'Choose your own password' }).waitFor();
      await page.getByText('Your password was set by someone else.').waitFor();
      expect(await page.getByRole('navigation').count()).toBe(0);
      await screenshot(page, 'password-required');
      await page.getByLabel('Current password').fill(person.password);
      await page.getByLabel('New password', { exact: true }).fill('my very own passphrase now');
      await page.getByLabel('New password again').fill('my very own passphrase now');
      await page.getByRole('button', { name: 'Change my password' }).click();
      await page.getByRole('link', { name: 'Users' }).waitFor();
      await page.getByRole('heading', { name: 'Home' }).waitFor(); // the first page of the back office
    } finally {
      await fresh.close();
    }
  });
});
