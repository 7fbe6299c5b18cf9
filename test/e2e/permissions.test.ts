// A signed-in person without a permission sees which permission the server asked for (403), and
// the pages their permissions do not open are not offered; an action on a target holding more
// than the person is shown disabled with why, and a key worth less than declared is marked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { apiKeyService } from '../../src/api-keys/service.js';
import { OPERATOR } from '../../src/auth/authority.js';
import { systemClock } from '../../src/clock.js';

const VIEWER = { email: 'viewer@example.com', password: 'correct horse battery staple', firstName: 'Vera', lastName: 'Viewer' };
const KEEPER = { email: 'keeper@example.com', password: 'correct horse battery staple', firstName: 'Kim', lastName: 'Keeper' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  await db.insertInto('roles').values({ name: 'nobody-much', description: 'Signs in, nothing else' }).execute();
  await createPerson(db, VIEWER, 'nobody-much');
  const keeperRole = await db.insertInto('roles').values({ name: 'key-keeper' }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['api_keys.manage', 'users.list'].map((permission) => ({ role_id: keeperRole.id, permission }))).execute();
  await createPerson(db, KEEPER, 'key-keeper');
  // A key wider than the keeper (from the command line), and one the keeper made when it also held users.read.
  const keys = apiKeyService({ db, clock: systemClock });
  await keys.create(OPERATOR, { name: 'Wide', permissions: ['users.create', 'roles.manage'] });
  const keeper = await db.selectFrom('users').select('id').where('email', '=', KEEPER.email).executeTakeFirstOrThrow();
  const made = await keys.create(OPERATOR, { name: 'Narrowed', permissions: ['users.list', 'users.read'] });
  await db.updateTable('api_keys').set({ created_by: keeper.id }).where('id', '=', made.key.id).execute();
});
afterAll(() => service.stop());

describe('permissions in the page', () => {
  it('shows a 403 as the permission that is missing, and offers only the pages the person may use', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, VIEWER);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['Home', 'My sessions', 'Password']);

      await page.goto(`${service.baseUrl}/#/users`);
      await expect.poll(() => page.getByRole('alert').textContent()).toContain(
        "You don't have permission to do this: it needs the permission users.list.",
      );
      await screenshot(page, 'forbidden');
      await page.getByLabel('Language').selectOption('fr');
      await expect.poll(() => page.getByRole('alert').textContent()).toContain("Vous n'avez pas l'autorisation de faire ceci : il faut la permission users.list.");
    } finally {
      await browser.close();
    }
  });
});

describe('actions on a target that holds more than the person', () => {
  it('are shown disabled with the reason, and a key worth less than declared is marked', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, KEEPER);
      await page.getByRole('link', { name: 'API keys' }).click();
      const wide = page.getByRole('row', { name: /Wide/ });
      const rotateWide = wide.getByRole('button', { name: 'Rotate Wide' });
      await rotateWide.waitFor();
      expect(await rotateWide.isDisabled()).toBe(true);
      expect(await wide.getByText('Needs roles.manage, users.create, which you do not have.').isVisible()).toBe(true);
      // Revoking stays open to every key manager.
      expect(await wide.getByRole('button', { name: 'Revoke Wide' }).isDisabled()).toBe(false);
      const narrowed = page.getByRole('row', { name: /Narrowed/ });
      await narrowed.getByText('works only with: users.list').waitFor();
      await narrowed.getByText(KEEPER.email).waitFor();
      await screenshot(page, 'api-keys-authority');
    } finally {
      await browser.close();
    }
  });
});
