// A signed-in person without a permission sees which permission the server asked for (403), and
// the pages their permissions do not open are not offered; an action on a target holding more
// than the person is shown disabled with why, and a key worth less than declared is marked; on the
// roles page, a permission the person may not add or remove is shown disabled with why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { createAdministrator, createPerson, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { apiKeyService } from '../../src/api-keys/service.js';
import { OPERATOR } from '../../src/auth/authority.js';
import { systemClock } from '../../src/clock.js';

const VIEWER = { email: 'viewer@example.com', password: 'correct horse battery staple', firstName: 'Vera', lastName: 'Viewer' };
const KEEPER = { email: 'keeper@example.com', password: 'correct horse battery staple', firstName: 'Kim', lastName: 'Keeper' };
const ROLER = { email: 'roler@example.com', password: 'correct horse battery staple', firstName: 'Rae', lastName: 'Roler' };
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Admin' };
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
  // A role manager holding tasks.list only, a role holding more than it, and one holding no more.
  for (const [name, permissions] of [
    ['role-roler', ['roles.manage', 'tasks.list']],
    ['ops-wide', ['tasks.list', 'users.create']],
    ['ops-narrow', ['tasks.list']],
  ] as const) {
    const role = await db.insertInto('roles').values({ name }).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createPerson(db, ROLER, 'role-roler');
  await createAdministrator(db, ADMIN);
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

/** The role's permission checkbox: whether it is checked and enabled, its title, and the text its aria-describedby points at. */
async function permissionBox(page: Page, permission: string) {
  const box = page.getByRole('checkbox', { name: permission, exact: true });
  const describedBy = await box.getAttribute('aria-describedby');
  return {
    checked: await box.isChecked(),
    enabled: await box.isEnabled(),
    title: await page.locator(`label[for="role-permission-${permission}"]`).getAttribute('title'),
    why: describedBy === null ? null : await page.locator(`#${describedBy}`).textContent(),
  };
}

async function editRole(page: Page, name: string) {
  await page.getByRole('link', { name: 'Roles' }).click();
  await page.getByRole('link', { name: `Edit the role ${name}` }).click();
  await page.getByRole('heading', { name: `Edit the role ${name}` }).waitFor();
}

describe('the roles page', () => {
  it('shows disabled, with why, the permissions a role manager may not add or remove; the rest stays editable', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ROLER);
      await page.getByRole('heading', { name: 'Home' }).waitFor();

      // ops-wide holds users.create, which the manager lacks: it may remove nothing from it, and
      // may add only what it holds.
      await editRole(page, 'ops-wide');
      const cannotRemove = 'This role holds users.create, which you do not have: you cannot remove any of its permissions.';
      expect(await permissionBox(page, 'users.create')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      expect(await permissionBox(page, 'tasks.list')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      expect(await permissionBox(page, 'users.list')).toEqual({
        checked: false,
        enabled: false,
        title: 'Needs users.list, which you do not have.',
        why: 'You can only add permissions you hold yourself.',
      });
      expect(await permissionBox(page, 'roles.manage')).toEqual({ checked: false, enabled: true, title: null, why: null });
      await screenshot(page, 'role-authority');
      // What stays allowed is accepted by the server, and the locked permissions are kept.
      await page.getByLabel('Description').fill('Operations');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('row', { name: /ops-wide/ }).getByText('Operations').waitFor();
      const { db } = service.database;
      const kept = await db
        .selectFrom('role_permissions as rp')
        .innerJoin('roles as r', 'r.id', 'rp.role_id')
        .where('r.name', '=', 'ops-wide')
        .select('rp.permission')
        .orderBy('rp.permission')
        .execute();
      expect(kept.map((r) => r.permission)).toEqual(['tasks.list', 'users.create']);

      // ops-narrow holds nothing the manager lacks: its permissions may be removed.
      await editRole(page, 'ops-narrow');
      expect(await permissionBox(page, 'tasks.list')).toEqual({ checked: true, enabled: true, title: null, why: null });
      expect((await permissionBox(page, 'users.create')).enabled).toBe(false);
      expect(await page.locator('#role-cannot-remove').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });

  it('leaves every permission editable for an administrator', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await editRole(page, 'ops-wide');
      const boxes = page.getByRole('group', { name: 'Permissions' }).getByRole('checkbox');
      expect(await boxes.count()).toBeGreaterThan(10);
      for (const box of await boxes.all()) expect(await box.isEnabled(), (await box.getAttribute('value')) ?? '').toBe(true);
      expect(await permissionBox(page, 'users.create')).toEqual({ checked: true, enabled: true, title: null, why: null });
      expect(await page.locator('.hint').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });
});
