// "Download my data" in the back office (docs/PRIVACY.md): a person downloads their own data from
// the Security page after a fresh proof, in French; an administrator downloads a colleague's from
// the colleague's page, in English; a help desk without users.export sees the button disabled,
// with why. The files are the documents of GET /me/export and GET /users/{id}/export.
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdministrator, createPerson, confirmItIsMe, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { roleRow } from '../support/rows.js';
import { budget } from '../support/budgets.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Admin' };
const COLLEAGUE = { email: 'lin@example.com', password: 'a data-asking passphrase', firstName: 'Lin', lastName: 'Colleague' };
const HELPDESK = { email: 'hal@example.com', password: 'correct horse battery staple', firstName: 'Hal', lastName: 'Helpdesk' };
let service: Awaited<ReturnType<typeof startService>>;
const idOf = async (email: string) => (await service.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  for (const [name, permissions] of [
    ['reader', ['users.list', 'users.read']],
    ['helpdesk', ['users.list', 'users.read', 'roles.manage']],
  ] as const) {
    const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createAdministrator(db, ADMIN);
  await createPerson(db, COLLEAGUE, 'reader');
  await createPerson(db, HELPDESK, 'helpdesk');
});
afterAll(() => service.stop());

/** Clicks `button`, and answers the file the browser saved, parsed, with its suggested name. */
async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; document: Record<string, unknown> }> {
  const download = page.waitForEvent('download');
  await click();
  const file = await download;
  return { name: file.suggestedFilename(), document: JSON.parse(await readFile((await file.path())!, 'utf8')) as Record<string, unknown> };
}

describe('downloading personal data in the back office', () => {
  it('a person downloads their own data from the Security page after a fresh proof, in French', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const colleague = await idOf(COLLEAGUE.email);
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, COLLEAGUE);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.getByLabel('Language').selectOption('fr');
      await page.goto(`${service.baseUrl}/#/security`);
      await page.getByRole('heading', { name: 'Mes données' }).waitFor();
      const { name, document } = await downloaded(page, async () => {
        await page.getByRole('button', { name: 'Télécharger mes données' }).click();
        // The document holds every address the person signed in from: a fresh proof first.
        const dialog = page.getByRole('dialog', { name: 'Confirmez votre identité' });
        await dialog.waitFor();
        await dialog.getByLabel('Votre mot de passe').fill(COLLEAGUE.password);
        await dialog.getByRole('button', { name: 'Confirmer' }).click();
      });
      expect(name).toMatch(new RegExp(`^personal-data-${colleague}-\\d{4}-\\d{2}-\\d{2}\\.json$`));
      expect(document).toMatchObject({ format: 'backoffice.personal-data.v1', user: { id: colleague, email: COLLEAGUE.email } });
      expect((document.sessions as unknown[]).length).toBeGreaterThanOrEqual(1);
      await page.getByText('Vos données ont été téléchargées.').waitFor();
      await screenshot(page, 'download-my-data');
    } finally {
      await browser.close();
    }
  });

  it("an administrator downloads a colleague's data from their page; a help desk without users.export sees why not", { timeout: budget({ browserFlow: 2 }) }, async () => {
    const colleague = await idOf(COLLEAGUE.email);
    const english = await openBrowser();
    try {
      const { page } = english;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users/${colleague}`);
      await page.getByRole('heading', { name: COLLEAGUE.email }).waitFor();
      const { document } = await downloaded(page, async () => {
        await page.getByRole('button', { name: 'Download their data' }).click();
        await confirmItIsMe(page, { password: ADMIN.password });
      });
      expect(document).toMatchObject({ user: { id: colleague, email: COLLEAGUE.email } });
      expect(JSON.stringify(document)).not.toContain(ADMIN.email);
      await page.getByText(`The data of ${COLLEAGUE.email} was downloaded (recorded in the audit journal).`).waitFor();
      const recorded = await service.database.db.selectFrom('security_events').select(['actor_id']).where('type', '=', 'user_exported').where('user_id', '=', colleague).execute();
      expect(recorded.map((e) => e.actor_id)).toContain(await idOf(ADMIN.email));
    } finally {
      await english.close();
    }

    const helpdesk = await openBrowser();
    try {
      const { page } = helpdesk;
      await signIn(page, service.baseUrl, HELPDESK);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users/${colleague}`);
      await page.getByRole('heading', { name: COLLEAGUE.email }).waitFor();
      const button = page.getByRole('button', { name: 'Download their data' });
      expect(await button.isDisabled()).toBe(true);
      expect(await button.getAttribute('title')).toContain('users.export');
    } finally {
      await helpdesk.close();
    }
  });
});
