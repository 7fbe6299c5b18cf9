// Two people edit the same record: the back office sends If-Match on every edit, and when someone
// else changed the record between loading the form and saving it, the page says so, shows the
// current values and overwrites nothing (docs/SAFE-WRITES.md). The other change is made through
// the API, between the page's load and its save.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, openBrowser, screenshot, signIn, startService, storedTokens, type BrowserSession } from '../support/e2e.js';
import { makeApiKey } from '../support/access-fixtures.js';
import { steppedUpInDatabase } from '../support/second-factor.js';

/** The administrator's sessions hold a fresh proof: creating users and changing keys are sensitive changes (x-step-up). */
async function steppedUpAdministrator() {
  const { id } = await service.database.db.selectFrom('users').select('id').where('email', '=', ADMIN.email).executeTakeFirstOrThrow();
  await steppedUpInDatabase(service.database.db, id);
}

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

describe('editing a record someone else changed meanwhile', () => {
  it('users, roles and meetings: the save is refused (412), the page says so and shows the other change; saving again then works', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await steppedUpAdministrator();
    // The other person: the same API, another session of theirs (here the same account's token).
    const api = async (method: string, path: string, body?: object) => {
      const res = await fetch(`${service.baseUrl}${path}`, {
        method,
        headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: `Bearer ${(await storedTokens(page)).accessToken}` },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };

    // A user: the form is loaded, then the other person renames them, then this person saves.
    const grace = await api('POST', '/users', { email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper', roles: [] });
    await page.goto(`${service.baseUrl}/#/users/${grace.body.id as string}`);
    await page.getByRole('heading', { name: 'grace@example.com' }).waitFor();
    expect((await api('PATCH', `/users/${grace.body.id as string}`, { last_name: 'Murray Hopper' })).status).toBe(200);
    await page.getByLabel('First name').fill('Amazing Grace');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Someone else changed this record while you were editing it.').waitFor();
    // The notice comes with the form rebuilt from the record as it now is (web/src/tagged-editor.tsx):
    // the current values, the other person's change included; nothing of this person's was saved.
    expect(await page.getByLabel('Last name').inputValue()).toBe('Murray Hopper');
    expect(await page.getByLabel('First name').inputValue()).toBe('Grace');
    expect((await api('GET', `/users/${grace.body.id as string}`)).body).toMatchObject({ first_name: 'Grace', last_name: 'Murray Hopper' });
    await screenshot(page, 'changed-meanwhile');
    // Saving again over the values now shown is a deliberate change: it goes through.
    await page.getByLabel('First name').fill('Amazing Grace');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await api('GET', `/users/${grace.body.id as string}`)).body).toMatchObject({ first_name: 'Amazing Grace', last_name: 'Murray Hopper' });

    // A role: the same, in the roles page's form.
    const role = await api('POST', '/roles', { name: 'support', description: 'Reads users', permissions: ['users.list'] });
    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('link', { name: 'Edit the role support' }).click();
    await page.getByRole('heading', { name: 'Edit the role support' }).waitFor();
    expect((await api('PATCH', `/roles/${role.body.id as string}`, { description: 'Answers customers' })).status).toBe(200);
    await page.getByLabel('users.read', { exact: true }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Someone else changed this record while you were editing it.').waitFor();
    expect(await page.getByLabel('Description').inputValue()).toBe('Answers customers');
    expect(await page.getByLabel('users.read', { exact: true }).isChecked()).toBe(false);
    expect((await api('GET', `/roles/${role.body.id as string}`)).body).toMatchObject({ description: 'Answers customers', permissions: ['users.list'] });

    // A meeting, opened from the week view: the save and then the delete each meet the other change.
    const starts = new Date();
    starts.setHours(10, 0, 0, 0); // today, so in the week the page opens on
    const meeting = await api('POST', '/meetings', { title: 'Design review', starts_at: starts.toISOString(), ends_at: new Date(starts.getTime() + 3600_000).toISOString(), attendee_ids: [] });
    const meetingPath = `/meetings/${meeting.body.id as string}`;
    await page.getByRole('link', { name: 'Meetings' }).click();
    await page.getByRole('button', { name: 'Design review' }).click();
    await page.getByRole('heading', { name: 'Change Design review' }).waitFor();
    expect((await api('PATCH', meetingPath, { location: 'Room 4' })).status).toBe(200);
    await page.getByLabel('Title').fill('Design review (moved)');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Someone else changed this record while you were editing it.').waitFor();
    expect(await page.getByLabel('Location').inputValue()).toBe('Room 4');
    expect(await page.getByLabel('Title').inputValue()).toBe('Design review');
    expect((await api('GET', meetingPath)).body).toMatchObject({ title: 'Design review', location: 'Room 4' });
    // Deleting what someone else has just changed is refused the same way: the meeting stays.
    expect((await api('PATCH', meetingPath, { title: 'Design review, with Grace' })).status).toBe(200);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'Change Design review, with Grace' }).waitFor();
    expect(await page.getByLabel('Title').inputValue()).toBe('Design review, with Grace');
    expect((await api('GET', meetingPath)).status).toBe(200);
  });

  it("an API key's limits: a save over someone else's change is refused, and the page shows theirs", async () => {
    // A browser of its own: signed in here, whatever the test above left.
    const own = await openBrowser();
    const { page } = own;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await steppedUpAdministrator();
    const key = await makeApiKey(service.database.db, ['users.list'], { name: 'CRM sync' });
    await page.goto(`${service.baseUrl}/#/api-keys/${key.id}`);
    await page.getByRole('heading', { name: 'CRM sync' }).waitFor();
    // The other person limits the key through the API after this page loaded it.
    const res = await fetch(`${service.baseUrl}/api-keys/${key.id}`, {
      method: 'PATCH',
      headers: { Accept: 'application/json', 'Content-Type': 'application/json', Authorization: `Bearer ${(await storedTokens(page)).accessToken}` },
      body: JSON.stringify({ rate_limit: { requests: 100, per_seconds: 60 } }),
    });
    expect(res.status).toBe(200);
    await page.locator('#edit-limit-requests').fill('5');
    await page.locator('#edit-limit-seconds').fill('10');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText('Someone else changed this record while you were editing it.').waitFor();
    await page.getByText('100 requests per 60 s').waitFor();
    const held = await service.database.db.selectFrom('api_keys').select('rate_limit_requests').where('id', '=', key.id).executeTakeFirstOrThrow();
    expect(held.rate_limit_requests).toBe(100);
    // Saving again over the values now shown goes through.
    await page.locator('#edit-limit-requests').fill('5');
    await page.locator('#edit-limit-seconds').fill('10');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText('Saved.').waitFor();
    await page.getByText('5 requests per 10 s').waitFor();
    await own.close();
  });
});
