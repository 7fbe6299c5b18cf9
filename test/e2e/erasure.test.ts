// An administrator erases a person from their page (docs/ERASURE.md): a confirmation that names
// what will happen, the step-up dialog, then the notice, and the page shows the erased person; in
// French, the button and its confirmation say the same, and declining it erases nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, createPerson, confirmItIsMe, openBrowser, signIn, startService } from '../support/e2e.js';
import { roleRow } from '../support/rows.js';
import { budget } from '../support/budgets.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Admin' };
const LEAVER = { email: 'zoe@example.com', password: 'a passphrase of the leaver', firstName: 'Zoe', lastName: 'Leaver' };
const STAYER = { email: 'sam@example.com', password: 'a passphrase of the stayer', firstName: 'Sam', lastName: 'Stayer' };
let service: Awaited<ReturnType<typeof startService>>;
const idOf = async (email: string) => (await service.database.db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()).id;
const erasedAt = async (id: string) => (await service.database.db.selectFrom('users').select('erased_at').where('id', '=', id).executeTakeFirstOrThrow()).erased_at;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  const role = await db.insertInto('roles').values(roleRow({ name: 'reader' })).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['users.list', 'users.read'].map((permission) => ({ role_id: role.id, permission }))).execute();
  await createAdministrator(db, ADMIN);
  await createPerson(db, LEAVER, 'reader');
  await createPerson(db, STAYER, 'reader');
});
afterAll(() => service.stop());

describe('erasing a person in the back office', () => {
  it('an administrator erases a person after a confirmation naming what happens and a fresh proof; in French, declining erases nothing', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const leaver = await idOf(LEAVER.email);
    const stayer = await idOf(STAYER.email);
    const { page, close } = await openBrowser();
    try {
      const asked: string[] = [];
      let accept = true;
      page.on('dialog', (confirm) => {
        asked.push(confirm.message());
        void (accept ? confirm.accept() : confirm.dismiss());
      });
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await page.goto(`${service.baseUrl}/#/users/${leaver}`);
      await page.getByRole('heading', { name: LEAVER.email }).waitFor();
      await page.getByRole('button', { name: 'Erase this person' }).click();
      // Irreversible: the administrator (without a second factor here) confirms with the password.
      await confirmItIsMe(page, { password: ADMIN.password });
      await page.getByText('The person is erased.').waitFor();
      await page.getByText('An erased person: nothing names them any more.').waitFor();
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatch(/^Erase zoe@example\.com for good\? Their name, e-mail, sign-in addresses, sessions, second factors, passkeys, invitations and messages are deleted/);
      expect(asked[0]).toContain('This cannot be undone.');
      expect(await erasedAt(leaver)).not.toBeNull();
      await page.getByRole('heading', { name: `erased-${leaver}@erased.invalid` }).waitFor();
      expect(await page.getByRole('button', { name: 'Erase this person' }).count()).toBe(0);

      await page.getByLabel('Language').selectOption('fr');
      await page.goto(`${service.baseUrl}/#/users/${stayer}`);
      await page.getByRole('heading', { name: STAYER.email }).waitFor();
      accept = false;
      await page.getByRole('button', { name: 'Effacer cette personne' }).click();
      await expect.poll(() => asked.length).toBe(2);
      expect(asked[1]).toMatch(/^Effacer sam@example\.com définitivement \?/);
      expect(asked[1]).toContain('irréversible');
      expect(await erasedAt(stayer)).toBeNull();
    } finally {
      await close();
    }
  });
});
