// Invitations in a real Chromium against the real service on PostgreSQL: an administrator invites
// a colleague from the back office (the step-up dialog asks for the password), the link is read
// from the messages outbox (the development mailbox's table), the colleague follows it, chooses a
// password and lands signed in; the administrator then revokes another invitation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRole } from '../support/access-fixtures.js';
import { createAdministrator, openBrowser, screenshot, signIn, startService, waitForCount, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  // The link points at the first PASSKEY_ORIGINS origin: this service's.
  service = await startService({ host: 'localhost', env: (baseUrl) => ({ PASSKEY_ORIGINS: baseUrl }) });
  await createAdministrator(service.database.db, ADMIN);
  await makeRole(service.database.db, ['tasks.list', 'tasks.read'], 'support');
});
afterAll(() => service?.stop());

const linkSentTo = async (email: string) => {
  const message = await service.database.db.selectFrom('messages').select('body').where('recipient', '=', email).orderBy('created_at', 'desc').executeTakeFirstOrThrow();
  return /(http:\/\/\S+#\/invitation\?token=\S+)/.exec(message.body)![1]!;
};

describe('the Invitations page', () => {
  let browser: BrowserSession;
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(() => browser?.close());

  it('invites a colleague, who follows the link, chooses a password and is signed in with the invited role', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'Invitations' }).click();
    await page.getByRole('heading', { name: 'Invitations', level: 1 }).waitFor();
    await page.getByLabel('E-mail address').fill('grace@example.com');
    await page.getByLabel('Roles').fill('support');
    await page.getByRole('button', { name: 'Send the invitation' }).click();
    const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
    await dialog.getByLabel('Your password').fill(ADMIN.password);
    await dialog.getByRole('button', { name: 'Confirm' }).click();
    await page.getByText('Invitation sent to grace@example.com.').waitFor();
    // The list reloads after the notice shows: wait for the row, as long as any step may take.
    await waitForCount(page.locator('tbody tr'), 1);
    await screenshot(page, 'invitations');

    const link = await linkSentTo('grace@example.com');
    const colleague = await openBrowser();
    try {
      await colleague.page.goto(link);
      await colleague.page.getByRole('heading', { name: 'Create your account' }).waitFor();
      await colleague.page.getByLabel('First name').fill('Grace');
      await colleague.page.getByLabel('Last name').fill('Hopper');
      await colleague.page.getByLabel('Password (12 characters or more)').fill('a password of my own choosing');
      await colleague.page.getByRole('button', { name: 'Create my account' }).click();
      await colleague.page.getByText('Signed in as Grace Hopper').waitFor();
      await colleague.page.getByRole('link', { name: 'Tasks' }).waitFor();
    } finally {
      await colleague.close();
    }
    const user = await service.database.db.selectFrom('users').select(['first_name', 'must_change_password']).where('email', '=', 'grace@example.com').executeTakeFirstOrThrow();
    expect(user).toEqual({ first_name: 'Grace', must_change_password: false });

    await page.reload();
    await page.getByRole('cell', { name: 'Accepted' }).waitFor();
  });

  it('revokes an invitation: its link then opens nothing', async () => {
    const { page } = browser;
    await page.getByLabel('E-mail address').fill('linus@example.com');
    await page.getByRole('button', { name: 'Send the invitation' }).click();
    await page.getByText('Invitation sent to linus@example.com.').waitFor();
    // The link as it was sent (revoking takes it out of the outbox as well).
    const link = await linkSentTo('linus@example.com');
    await page.getByRole('button', { name: 'Revoke linus@example.com' }).click();
    await page.getByText('The invitation of linus@example.com was revoked.').waitFor();
    expect(await service.database.db.selectFrom('messages').select('id').where('recipient', '=', 'linus@example.com').execute()).toEqual([]);
    const stranger = await openBrowser();
    try {
      await stranger.page.goto(link);
      await stranger.page.getByLabel('First name').fill('Linus');
      await stranger.page.getByLabel('Last name').fill('Torvalds');
      await stranger.page.getByLabel('Password (12 characters or more)').fill('a password of my own choosing');
      await stranger.page.getByRole('button', { name: 'Create my account' }).click();
      await stranger.page.getByText('This invitation link is unknown, used, replaced, revoked or expired.').waitFor();
    } finally {
      await stranger.close();
    }
  });
});
