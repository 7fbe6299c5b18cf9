// An administrator resets the second factors of a colleague who lost their phone, from the user's
// page (docs/AUTH.md, "A lost phone"): a confirmation, the step-up dialog, then the notice; the
// colleague's factors are gone. A lesser administrator sees the button disabled, with why, on the
// page of someone holding more than they do. In English, then in French.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, createPerson, confirmItIsMe, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { totpCode } from '../support/second-factor.js';
import { roleRow } from '../support/rows.js';
import { budget } from '../support/budgets.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Admin' };
const COLLEAGUE = { email: 'lin@example.com', password: 'a phone-losing passphrase', firstName: 'Lin', lastName: 'Colleague' };
const HELPDESK = { email: 'hal@example.com', password: 'correct horse battery staple', firstName: 'Hal', lastName: 'Helpdesk' };
let service: Awaited<ReturnType<typeof startService>>;
const idOf = async (email: string) => (await service.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
const factorsOf = async (userId: string) => (await service.database.db.selectFrom('second_factors').select('id').where('user_id', '=', userId).execute()).length;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  for (const [name, permissions] of [
    ['reader', ['users.list', 'users.read']],
    ['helpdesk', ['users.list', 'users.read', 'users.reset_second_factors', 'roles.manage']],
  ] as const) {
    const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createAdministrator(db, ADMIN);
  await createPerson(db, COLLEAGUE, 'reader');
  await createPerson(db, HELPDESK, 'helpdesk');
  // The colleague enrolled an authenticator app, through the API.
  const send = (path: string, body: object, token?: string) =>
    fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }),
    );
  const { body: set } = await send('/sessions', { session: { email: COLLEAGUE.email, password: COLLEAGUE.password } });
  expect((await send('/sessions/current/step-up', { password: COLLEAGUE.password }, set.access_token)).status).toBe(200);
  const { body: started } = await send('/me/totp', {}, set.access_token);
  expect((await send('/me/totp/confirm', { totp_code: totpCode(started.secret!, new Date()) }, set.access_token)).status).toBe(200);
});
afterAll(() => service.stop());

describe('resetting second factors in the back office', () => {
  it("an administrator resets a colleague's factors after a confirmation and a fresh proof; a lesser one cannot strip an administrator", { timeout: budget({ browserFlow: 2 }) }, async () => {
    const colleague = await idOf(COLLEAGUE.email);
    expect(await factorsOf(colleague)).toBe(1);

    const english = await openBrowser();
    try {
      const { page } = english;
      const asked: string[] = [];
      page.on('dialog', (confirm) => {
        asked.push(confirm.message());
        void confirm.accept();
      });
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users/${colleague}`);
      await page.getByRole('heading', { name: COLLEAGUE.email }).waitFor();
      await page.getByRole('button', { name: 'Reset second factors' }).click();
      // A sensitive change: the administrator (without a second factor here) confirms with the password.
      await confirmItIsMe(page, { password: ADMIN.password });
      await page.getByText(`The second factors of ${COLLEAGUE.email} are reset; they are signed out everywhere.`).waitFor();
      expect(asked).toEqual([`Remove every authenticator app, passkey and recovery code of ${COLLEAGUE.email}, and sign them out everywhere? They will sign in with their password alone, and enrol again.`]);
      await screenshot(page, 'second-factors-reset');
      expect(await factorsOf(colleague)).toBe(0);
    } finally {
      await english.close();
    }

    const french = await openBrowser();
    try {
      const { page } = french;
      await signIn(page, service.baseUrl, HELPDESK);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.getByLabel('Language').selectOption('fr');
      // The administrator holds permissions the help desk lacks (read from the roles, which roles.manage shows): the button is off, and says why.
      await page.goto(`${service.baseUrl}/#/users/${await idOf(ADMIN.email)}`);
      await page.getByRole('heading', { name: ADMIN.email }).waitFor();
      const reset = page.getByRole('button', { name: 'Réinitialiser les seconds facteurs' });
      // Off once the roles are read (what the administrator holds): wait for the page to say so.
      await page.getByRole('button', { name: 'Réinitialiser les seconds facteurs', disabled: true }).waitFor();
      expect(await reset.isDisabled()).toBe(true);
      expect(await reset.getAttribute('title')).toMatch(/^Il faut .*api_keys\.manage.*, que vous n’avez pas\.$/);
      // The colleague holds nothing more than the help desk: the button is on.
      await page.goto(`${service.baseUrl}/#/users/${colleague}`);
      await page.getByRole('heading', { name: COLLEAGUE.email }).waitFor();
      await page.getByRole('button', { name: 'Réinitialiser les seconds facteurs', disabled: false }).waitFor();
      expect(await page.getByRole('button', { name: 'Réinitialiser les seconds facteurs' }).isEnabled()).toBe(true);
    } finally {
      await french.close();
    }
  });
});
