// The Tasks page in a real Chromium against the real service on PostgreSQL: create, filter, change
// a status in place with the keyboard, edit, delete; French; and the permission hints of someone
// who may list tasks but not change them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRole } from '../support/access-fixtures.js';
import { createAdministrator, createPerson, openBrowser, screenshot, signIn, startService, waitForCount, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const READER = { email: 'rita@example.com', password: 'a reader of tasks only', firstName: 'Rita', lastName: 'Reader' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  const { db } = service.database;
  await createAdministrator(db, ADMIN);
  await makeRole(db, ['tasks.list', 'tasks.read'], 'task-readers');
  await createPerson(db, READER, 'task-readers');
});
afterAll(() => service?.stop());

const taskRow = (db: typeof service.database.db, title: string) => db.selectFrom('tasks').selectAll().where('title', '=', title).executeTakeFirst();

describe('the Tasks page', () => {
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(() => browser?.close());

  it('creates a task, finds it by a search without accents, changes its status in place with the keyboard, edits and deletes it', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Tasks' }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    await page.getByRole('link', { name: 'New task' }).click();
    await page.getByLabel('Title').fill('Réviser le budget de l’école');
    await page.getByLabel('Description').fill('Before Friday.');
    await page.getByLabel('Priority').selectOption('high');
    await page.getByLabel('Assignee').selectOption({ label: 'Me (Ada Lovelace)' });
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Réviser le budget de l’école' }).waitFor();
    const created = await taskRow(service.database.db, 'Réviser le budget de l’école');
    expect(created).toMatchObject({ description: 'Before Friday.', priority: 'high', status: 'todo' });

    await page.getByRole('link', { name: 'Back to the tasks' }).click();
    await page.getByLabel('Search titles').fill('ECOLE');
    await page.getByLabel('Assigned to me').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    const status = page.getByLabel('Status of Réviser le budget de l’école');
    await status.waitFor();
    await waitForCount(page.locator('tbody tr'), 1);
    expect(await page.locator('tbody tr').count()).toBe(1);
    await screenshot(page, 'tasks');

    // In place, with the keyboard only: focus the select, pick "in progress".
    await status.focus();
    await page.keyboard.press('ArrowDown');
    // The row says "Saved." once the list shows the task as saved.
    await page.getByRole('row', { name: /Réviser le budget de l’école/ }).getByRole('status').getByText('Saved.').waitFor();
    expect((await taskRow(service.database.db, 'Réviser le budget de l’école'))?.status).toBe('in_progress');
    expect(await status.inputValue()).toBe('in_progress');

    await page.getByRole('link', { name: 'Réviser le budget de l’école' }).click();
    await page.getByLabel('Title').fill('Réviser le budget');
    await page.getByLabel('Status').selectOption('done');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const edited = await taskRow(service.database.db, 'Réviser le budget');
    expect(edited?.status).toBe('done');
    expect(edited?.completed_at).not.toBeNull();

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete' }).click();
    // The list opens once the server answered the deletion.
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    expect(await taskRow(service.database.db, 'Réviser le budget')).toBeUndefined();
  });

  it('speaks French', async () => {
    const french = await openBrowser({ locale: 'fr-FR' });
    try {
      const { page } = french;
      // The browser prefers French; the sign-in helper reads English, so switch there and back.
      await page.goto(`${service.baseUrl}/`);
      await page.getByLabel('Langue').selectOption('en');
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('link', { name: 'Tâches' }).click();
      await page.getByRole('heading', { name: 'Tâches' }).waitFor();
      await page.getByRole('link', { name: 'Nouvelle tâche' }).waitFor();
      await page.getByLabel('Rechercher dans les titres').waitFor();
      await page.getByRole('columnheader', { name: 'Échéance' }).or(page.getByText('Aucune tâche ne correspond.')).first().waitFor();
    } finally {
      await french.close();
    }
  });
});

describe('permission hints', () => {
  it('someone holding tasks.list and tasks.read sees the tasks, but the status, creating, saving and deleting are disabled with why', async () => {
    const { db } = service.database;
    const admin = await db.selectFrom('users').select('id').where('email', '=', ADMIN.email).executeTakeFirstOrThrow();
    await db.insertInto('tasks').values({ title: 'Read only for Rita', created_by_user_id: admin.id }).execute();
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, READER);
      await page.getByRole('link', { name: 'Tasks' }).click();
      const status = page.getByLabel('Status of Read only for Rita');
      await status.waitFor();
      expect(await status.isDisabled()).toBe(true);
      await page.getByText('Needs tasks.update').first().waitFor();
      await page.getByText('Needs tasks.create').waitFor();
      expect(await page.getByRole('link', { name: 'New task' }).count()).toBe(0);
      await page.getByRole('link', { name: 'Read only for Rita' }).click();
      await page.getByRole('heading', { name: 'Read only for Rita' }).waitFor();
      expect(await page.getByRole('button', { name: 'Save' }).isDisabled()).toBe(true);
      expect(await page.getByRole('button', { name: 'Delete' }).isDisabled()).toBe(true);
      await page.getByText('Needs tasks.delete').waitFor();
    } finally {
      await browser.close();
    }
  });
});
