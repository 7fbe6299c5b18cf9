// A signed-in person without a permission sees which permission the server asked for (403), and
// the pages their permissions do not open are not offered; an action on a target holding more
// than the person is shown disabled with why, and a key worth less than declared is marked; on the
// roles page, a permission the person may not add or remove, and on the users page a role they may
// not grant or take away, a user they may not disable, an operation they lack, are shown disabled
// with why.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { confirmItIsMe, createAdministrator, createPerson, openBrowser, screenshot, signIn, startService, waitForText } from '../support/e2e.js';
import { declaredLinks } from '../support/navigation.js';
import { ApiKeyService, type KeyInput } from '../../src/api-keys/service.js';
import { OPERATOR } from '../../src/auth/authority.js';
import { systemClock } from '../../src/clock.js';
import { roleRow } from '../support/rows.js';

const VIEWER = { email: 'viewer@example.com', password: 'correct horse battery staple', firstName: 'Vera', lastName: 'Viewer' };
const KEEPER = { email: 'keeper@example.com', password: 'correct horse battery staple', firstName: 'Kim', lastName: 'Keeper' };
const ROLER = { email: 'roler@example.com', password: 'correct horse battery staple', firstName: 'Rae', lastName: 'Roler' };
const MANAGER = { email: 'manager@example.com', password: 'correct horse battery staple', firstName: 'Max', lastName: 'Manager' };
const READER = { email: 'reader@example.com', password: 'correct horse battery staple', firstName: 'Rita', lastName: 'Reader' };
const ADMIN = { email: 'admin@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Admin' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  await db.insertInto('roles').values(roleRow({ name: 'nobody-much', description: 'Signs in, nothing else' })).execute();
  await createPerson(db, VIEWER, 'nobody-much');
  const keeperRole = await db.insertInto('roles').values(roleRow({ name: 'key-keeper' })).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['api_keys.manage', 'users.list'].map((permission) => ({ role_id: keeperRole.id, permission }))).execute();
  await createPerson(db, KEEPER, 'key-keeper');
  // A key wider than the keeper (from the command line), and one the keeper made when it also held users.read.
  const keys = new ApiKeyService({ db, clock: systemClock });
  const makeKey = (sent: KeyInput) => {
    const draft = keys.draft(OPERATOR, sent);
    return db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
  };
  await makeKey({ name: 'Wide', permissions: ['users.create', 'roles.manage'] });
  const keeper = await db.selectFrom('users').select('id').where('email', '=', KEEPER.email).executeTakeFirstOrThrow();
  const made = await makeKey({ name: 'Narrowed', permissions: ['users.list', 'users.read'] });
  await db.updateTable('api_keys').set({ created_by: keeper.id }).where('id', '=', made.key.id).execute();
  // A role manager holding tasks.list only, a role holding more than it, and one holding no more.
  for (const [name, permissions] of [
    ['role-roler', ['roles.manage', 'tasks.list']],
    ['ops-wide', ['tasks.list', 'users.create']],
    ['ops-narrow', ['tasks.list']],
  ] as const) {
    const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createPerson(db, ROLER, 'role-roler');
  // A user manager lacking api_keys.manage (which the keeper holds), and one who may only read users.
  for (const [name, permissions] of [
    ['user-manager', ['users.list', 'users.read', 'users.create', 'users.update', 'users.disable', 'roles.manage', 'tasks.list']],
    ['user-reader', ['users.list', 'users.read']],
  ] as const) {
    const role = await db.insertInto('roles').values(roleRow({ name })).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
  }
  await createPerson(db, MANAGER, 'user-manager');
  await createPerson(db, READER, 'user-reader');
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
      // Home and the person's own account: every page that needs no permission (web/src/pages/registry.ts).
      expect(await nav.getByRole('link').allTextContents()).toEqual(declaredLinks('en', []));
      expect(declaredLinks('en', [])).toEqual(expect.arrayContaining(['Home', 'My sessions', 'Security', 'Password']));

      await page.goto(`${service.baseUrl}/#/users`);
      await page.getByRole('alert').filter({ hasText: "You don't have permission to do this: it needs the permission users.list." }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain("You don't have permission to do this: it needs the permission users.list.");
      await screenshot(page, 'forbidden');
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('alert').filter({ hasText: "Vous n’avez pas l’autorisation de faire ceci : il faut la permission users.list." }).waitFor();
      expect(await page.getByRole('alert').textContent()).toContain("Vous n’avez pas l’autorisation de faire ceci : il faut la permission users.list.");
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
      const needs = 'Needs roles.manage, users.create, which you do not have.';
      expect(await lockState(page, rotateWide)).toEqual({ enabled: false, title: needs, why: needs });
      expect(await wide.getByText(needs).isVisible()).toBe(true);
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

/** A control: whether it is enabled, its title, and the text its aria-describedby points at. */
async function lockState(page: Page, control: Locator, title: Locator = control) {
  const describedBy = await control.getAttribute('aria-describedby');
  return {
    enabled: await control.isEnabled(),
    title: await title.getAttribute('title'),
    why: describedBy === null ? null : await page.locator(`#${describedBy}`).textContent(),
  };
}

/** A checkbox (a role's permission, a user's role) by its label: checked or not, and its lock state (the title is its label's). */
async function box(page: Page, name: string) {
  const checkbox = page.getByRole('checkbox', { name, exact: true });
  const id = await checkbox.getAttribute('id');
  return { checked: await checkbox.isChecked(), ...(await lockState(page, checkbox, page.locator(`label[for="${id}"]`))) };
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
      expect(await box(page, 'users.create')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      expect(await box(page, 'tasks.list')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      expect(await box(page, 'users.list')).toEqual({
        checked: false,
        enabled: false,
        title: 'Needs users.list, which you do not have.',
        why: 'You can only add permissions you hold yourself.',
      });
      expect(await box(page, 'roles.manage')).toEqual({ checked: false, enabled: true, title: null, why: null });
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
      expect(await box(page, 'tasks.list')).toEqual({ checked: true, enabled: true, title: null, why: null });
      expect((await box(page, 'users.create')).enabled).toBe(false);
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
      for (const checkbox of await boxes.all()) expect(await checkbox.isEnabled(), (await checkbox.getAttribute('value')) ?? '').toBe(true);
      expect(await box(page, 'users.create')).toEqual({ checked: true, enabled: true, title: null, why: null });
      // No reason why anything is locked (the form's other hints, such as the second-factor flag's, stay).
      expect(await page.locator('#role-cannot-add, #role-cannot-remove').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });
});

async function openUser(page: Page, email: string) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await page.getByRole('link', { name: email }).click();
  await page.getByRole('heading', { name: email }).waitFor();
}

async function newUser(page: Page) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
  await page.getByRole('link', { name: 'New user' }).click();
  await page.getByRole('heading', { name: 'New user' }).waitFor();
}

describe('the users page', () => {
  const cannotGrant = 'You can only grant a role whose every permission you hold yourself.';
  const needsKeys = 'Needs api_keys.manage, which you do not have.';

  it('shows disabled, with why, the roles a user manager may not grant or take away, and disabling a user holding more than it', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, MANAGER);
      await page.getByRole('heading', { name: 'Home' }).waitFor();

      // Creating: a role giving api_keys.manage cannot be granted; one giving no more than the manager holds can.
      await newUser(page);
      expect(await box(page, 'key-keeper')).toEqual({ checked: false, enabled: false, title: needsKeys, why: cannotGrant });
      expect((await box(page, 'admin')).enabled).toBe(false);
      expect(await box(page, 'ops-wide')).toEqual({ checked: false, enabled: true, title: null, why: null });
      await page.getByLabel('E-mail').fill('olive@example.com');
      await page.getByLabel('First name').fill('Olive');
      await page.getByLabel('Last name').fill('Ops');
      await page.getByLabel('ops-wide').check();
      await page.getByRole('button', { name: 'Create' }).click();
      // Creating a user is a sensitive change: the dialog asks for a fresh proof, then creates.
      await confirmItIsMe(page, { password: MANAGER.password });
      await page.getByRole('heading', { name: 'olive@example.com' }).waitFor();

      // The keeper holds api_keys.manage: none of its roles can be taken away, it cannot be
      // disabled; a role the manager may grant still can be, and the server agrees.
      await openUser(page, KEEPER.email);
      const cannotRemove = 'This user holds api_keys.manage, which you do not have: you cannot take any of their roles away.';
      expect(await box(page, 'key-keeper')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      expect(await box(page, 'nobody-much')).toEqual({ checked: false, enabled: true, title: null, why: null });
      expect(await lockState(page, page.getByRole('button', { name: 'Disable' }))).toEqual({ enabled: false, title: needsKeys, why: needsKeys });
      expect(await lockState(page, page.getByLabel('Status'))).toEqual({ enabled: false, title: needsKeys, why: needsKeys });
      expect(await page.getByRole('button', { name: 'Save' }).isEnabled()).toBe(true);
      await screenshot(page, 'user-authority');
      await page.getByLabel('nobody-much').check();
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      // Judged against the user as saved (the notice comes with the form rebuilt from it): the role just granted cannot be taken away either.
      expect(await box(page, 'nobody-much')).toEqual({ checked: true, enabled: false, title: cannotRemove, why: cannotRemove });
      await page.getByLabel('Language').selectOption('fr');
      const frenchHint = "Cet utilisateur a api_keys.manage, que vous n’avez pas : vous ne pouvez lui retirer aucun rôle.";
      await waitForText(page.locator('#user-cannot-remove-roles'), frenchHint);
      expect(await page.locator('#user-cannot-remove-roles').textContent()).toBe(frenchHint);
      expect(await page.locator('#status-why').textContent()).toBe("Il faut api_keys.manage, que vous n’avez pas.");
      await page.getByLabel('Langue').selectOption('en');

      // The viewer holds nothing the manager lacks: its roles may be taken away, it may be disabled.
      await openUser(page, VIEWER.email);
      expect(await box(page, 'nobody-much')).toEqual({ checked: true, enabled: true, title: null, why: null });
      expect(await lockState(page, page.getByRole('button', { name: 'Disable' }))).toEqual({ enabled: true, title: null, why: null });
      expect(await page.getByLabel('Status').isEnabled()).toBe(true);
      expect(await page.locator('#user-cannot-remove-roles, #status-why').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });

  it('shows disabled, with why, creating, saving and disabling to a person lacking users.create, users.update, users.disable', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, READER);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await openUser(page, VIEWER.email);
      const needsUpdate = 'Needs users.update, which you do not have.';
      const needsDisable = 'Needs users.disable, which you do not have.';
      expect(await lockState(page, page.getByRole('button', { name: 'Save' }))).toEqual({ enabled: false, title: needsUpdate, why: needsUpdate });
      expect(await lockState(page, page.getByRole('button', { name: 'Disable' }))).toEqual({ enabled: false, title: needsDisable, why: needsDisable });
      // Without users.create there is no "New user" link; the form, opened by its address, says why it cannot create.
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      expect(await page.getByRole('link', { name: 'New user' }).count()).toBe(0);
      await page.goto(`${service.baseUrl}/#/users/new`);
      await page.getByRole('heading', { name: 'New user' }).waitFor();
      const needsCreate = 'Needs users.create, which you do not have.';
      expect(await lockState(page, page.getByRole('button', { name: 'Create' }))).toEqual({ enabled: false, title: needsCreate, why: needsCreate });
    } finally {
      await browser.close();
    }
  });

  it('leaves every role and action enabled for an administrator', async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();
      await newUser(page);
      const roles = page.getByRole('group', { name: 'Roles' }).getByRole('checkbox');
      await roles.first().waitFor();
      expect(await roles.count()).toBeGreaterThan(5);
      for (const checkbox of await roles.all()) expect(await checkbox.isEnabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Create' }).isEnabled()).toBe(true);

      await openUser(page, KEEPER.email);
      expect(await box(page, 'key-keeper')).toEqual({ checked: true, enabled: true, title: null, why: null });
      for (const checkbox of await roles.all()) expect(await checkbox.isEnabled()).toBe(true);
      expect(await lockState(page, page.getByRole('button', { name: 'Disable' }))).toEqual({ enabled: true, title: null, why: null });
      expect(await page.getByLabel('Status').isEnabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Save' }).isEnabled()).toBe(true);
      expect(await page.locator('.hint').count()).toBe(0);
    } finally {
      await browser.close();
    }
  });
});
