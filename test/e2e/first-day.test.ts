// The smaller things a new administrator met on day one: what each permission allows,
// in the same order in the role and the key forms; "New user" only for those who may create one;
// no "Try again" under a refusal that trying again cannot change; a word after creating a role or
// a user; a new meeting that does not start in the past.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRole } from '../support/access-fixtures.js';
import { budget } from '../support/budgets.js';
import { confirmItIsMe, createAdministrator, createPerson, openBrowser, signIn, startService } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const LISTER = { email: 'lister@example.com', password: 'a lister of users only', firstName: 'Lise', lastName: 'Lister' };
const NOBODY = { email: 'nobody@example.com', password: 'a person with no rights', firstName: 'Noé', lastName: 'Nobody' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  await createAdministrator(db, ADMIN);
  await makeRole(db, ['users.list', 'users.read'], 'user-listers');
  await createPerson(db, LISTER, 'user-listers');
  await makeRole(db, [], 'nothing-at-all');
  await createPerson(db, NOBODY, 'nothing-at-all');
}, budget({ passwordHash: 3 }));
afterAll(() => service?.stop());

describe('the back office on day one', () => {
  it('says what each permission allows, in the same order in the role and key forms, and confirms a created role and user', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();

      await page.goto(`${service.baseUrl}/#/roles/new`);
      const roleForm = page.getByRole('group', { name: 'Permissions' });
      await roleForm.getByText('See the list of users.').waitFor();
      await roleForm.getByText('Remove a user’s second factors, so they enrol again.').waitFor();
      const inRoleForm = await roleForm.getByRole('checkbox').evaluateAll((boxes) => boxes.map((box) => (box as unknown as { value: string }).value));
      await page.getByLabel('Name').fill('helpdesk');
      await page.getByLabel('users.list', { exact: true }).check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('The role helpdesk is created.').waitFor();

      await page.goto(`${service.baseUrl}/#/api-keys`);
      const keyForm = page.getByRole('group', { name: 'Permissions' });
      await keyForm.getByText('See the list of users.').waitFor();
      const inKeyForm = await keyForm.getByRole('checkbox').evaluateAll((boxes) => boxes.map((box) => (box as unknown as { value: string }).value));
      expect(inKeyForm).toEqual(inRoleForm);

      await page.goto(`${service.baseUrl}/#/users/new`);
      await page.getByLabel('E-mail').fill('grace@example.com');
      await page.getByLabel('First name').fill('Grace');
      await page.getByLabel('Last name').fill('Hopper');
      await page.getByRole('button', { name: 'Create' }).click();
      await confirmItIsMe(page, { password: ADMIN.password });
      await page.getByRole('heading', { name: 'grace@example.com' }).waitFor();
      await page.getByText('grace@example.com is created.').waitFor();

      // A new meeting starts in the future, whatever the time of day.
      await page.goto(`${service.baseUrl}/#/meetings`);
      // Read before the form opens: an hour may turn while it opens.
      const opened = Date.now();
      await page.getByRole('button', { name: 'Plan' }).click();
      const starts = await page.getByLabel('Starts').inputValue();
      expect(new Date(starts).getTime()).toBeGreaterThan(opened);
    } finally {
      await browser.close();
    }
  });

  it('offers "New user" only to who may create one, and no "Try again" under a missing permission', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const lister = await openBrowser();
    try {
      const { page } = lister;
      await signIn(page, service.baseUrl, LISTER);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users`);
      await page.getByRole('row', { name: /lister@example\.com/ }).waitFor();
      expect(await page.getByRole('link', { name: 'New user' }).count()).toBe(0);
    } finally {
      await lister.close();
    }
    const nobody = await openBrowser();
    try {
      const { page } = nobody;
      await signIn(page, service.baseUrl, NOBODY);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users`);
      await page.getByRole('alert').filter({ hasText: 'it needs the permission users.list' }).waitFor();
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
    } finally {
      await nobody.close();
    }
  });
});
