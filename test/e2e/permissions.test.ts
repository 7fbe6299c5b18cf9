// A signed-in person without a permission sees which permission the server asked for (403), and
// the pages their permissions do not open are not offered.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPerson, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';

const VIEWER = { email: 'viewer@example.com', password: 'correct horse battery staple', firstName: 'Vera', lastName: 'Viewer' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  await service.database.db.insertInto('roles').values({ name: 'nobody-much', description: 'Signs in, nothing else' }).execute();
  await createPerson(service.database.db, VIEWER, 'nobody-much');
});
afterAll(() => service.stop());

describe('permissions in the page', () => {
  it('shows a 403 as the permission that is missing, and offers only the pages the person may use', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, VIEWER);
      await page.getByRole('heading', { name: 'My sessions' }).waitFor();
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link').allTextContents()).toEqual(['My sessions', 'Password']);

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
