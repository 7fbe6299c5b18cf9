// The whole back office in a real Chromium against the real service on PostgreSQL: sign in, create
// an API key with only users.list, read its secret from the page, use it, revoke it in the page,
// sign out; and the users and roles pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmItIsMe, createAdministrator, openBrowser, readStorage, screenshot, signIn, startService, storedTokens, waitForCount, waitForListPage, type BrowserSession } from '../support/e2e.js';
import { userRow } from '../support/rows.js';
import { budget } from '../support/budgets.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
let service: Awaited<ReturnType<typeof startService>>;
let browser: BrowserSession;

beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
  browser = await openBrowser({ permissions: ['clipboard-read', 'clipboard-write'] });
});
afterAll(async () => {
  await browser?.close();
  await service?.stop();
});

const get = (path: string, headers: Record<string, string>) => fetch(`${service.baseUrl}${path}`, { headers: { Accept: 'application/json', ...headers } });

describe('the back office in a browser', () => {
  it('creates an API key with only users.list, whose secret works until it is revoked in the page; sign-out kills the access token', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();

    // A suggested expiration is filled in; clearing it shows the warning.
    const expires = page.getByLabel('Expiration date');
    expect(await expires.inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await expires.fill('');
    await page.getByText('This key will never expire.').waitFor();
    await page.getByLabel('Name').fill('Reporting');
    await page.getByLabel('users.list', { exact: true }).check();
    await screenshot(page, 'api-key-create');
    const inThirtyDays = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
    await expires.fill(inThirtyDays);
    expect(await page.getByText('This key will never expire.').count()).toBe(0);
    await page.getByRole('button', { name: 'Create the key' }).click();
    // A sensitive change: the page asks for the password (this administrator has no second factor), then creates the key.
    await confirmItIsMe(page, { password: ADMIN.password });

    await page.getByText('Copy it now: you will not see it again.').waitFor();
    const secret = (await page.getByTestId('api-key-secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThan(40);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied.').waitFor();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
    await screenshot(page, 'api-key-secret');

    // The key does what it may, and only that.
    expect((await get('/users', { 'x-api-key': secret })).status).toBe(200);
    const refused = await get('/roles', { 'x-api-key': secret });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ required_permission: 'roles.manage' });

    // The list shows it; the secret is nowhere on the page once dismissed.
    await page.getByRole('button', { name: 'I have copied it' }).click();
    const row = page.getByRole('row', { name: /Reporting/ });
    await row.getByText('expires in 30 days').waitFor();
    expect(await page.content()).not.toContain(secret);
    await screenshot(page, 'api-keys');

    // The key's own page: its limits, and its use per hour with the two requests above (written
    // by the server's next reconciliation, about a second later).
    await row.getByRole('link', { name: 'Reporting' }).click();
    await page.getByRole('heading', { name: 'Requests per hour, last 7 days' }).waitFor();
    // The page reads the usage when it opens: reload it until it shows the two requests.
    const summary = 'Last 7 days: 1 allowed, 0 rate-limited, 0 refused by the allowlist, 1 refused for lack of a permission.';
    for (;;) {
      await page.getByRole('heading', { name: 'Requests per hour, last 7 days' }).waitFor();
      if ((await page.getByText(summary).count()) === 1) break;
      await page.reload();
    }
    expect(await page.getByText(summary).count()).toBe(1);
    await screenshot(page, 'api-key-usage');
    await page.getByRole('link', { name: 'All API keys' }).click();
    await row.getByText('expires in 30 days').waitFor();

    // Rotating shows a new secret once. With a grace period the old one keeps working meanwhile;
    // without one it stops at once.
    const rotate = async (grace: string) => {
      await page.getByRole('button', { name: 'Rotate Reporting' }).click();
      await page.getByRole('heading', { name: 'Rotate Reporting: a new secret' }).waitFor();
      await page.getByLabel('The current secret keeps working').selectOption({ label: grace });
      await page.getByRole('button', { name: 'Issue the new secret' }).click();
      await page.getByText('Copy it now: you will not see it again.').waitFor();
      const issued = (await page.getByTestId('api-key-secret').textContent())!.trim();
      await page.getByRole('button', { name: 'I have copied it' }).click();
      return issued;
    };
    const withGrace = await rotate('for 1 hour');
    expect(withGrace).not.toBe(secret);
    expect((await get('/users', { 'x-api-key': withGrace })).status).toBe(200);
    expect((await get('/users', { 'x-api-key': secret })).status).toBe(200); // still within its hour
    const rotated = await rotate('no: it stops working now');
    expect(rotated).not.toBe(withGrace);
    expect((await get('/users', { 'x-api-key': withGrace })).status).toBe(401);
    expect((await get('/users', { 'x-api-key': rotated })).status).toBe(200);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Revoke Reporting' }).click();
    await row.getByText('revoked').waitFor();
    await row.getByText('(127.0.0.1)').waitFor(); // last used: time and address
    expect((await get('/users', { 'x-api-key': rotated })).status).toBe(401);
    expect((await get('/users', { 'x-api-key': secret })).status).toBe(401); // revocation ends the grace period too

    // Signing out ends the session on the server, not only in the page.
    const { accessToken } = await storedTokens(page);
    expect((await get('/me', { Authorization: `Bearer ${accessToken}` })).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
    await page.getByText('You are signed out.').waitFor();
    expect((await get('/me', { Authorization: `Bearer ${accessToken}` })).status).toBe(401);
    expect(await readStorage(page, 'backoffice.tokens')).toBeNull();
  });

  it('sets a key\'s uses, their refill and its metadata, shows what is left, and lowers the count on its page, in English and French', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('Counted');
    await page.getByLabel('users.list', { exact: true }).check();
    await page.locator('#key-limit-refill').selectOption('daily');
    await page.locator('#key-limit-refill-amount').fill('100');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByText('A refill needs a number of remaining uses.').waitFor();
    await page.locator('#key-limit-uses').fill('40');
    await page.locator('#key-limit-metadata').fill('{"customer_id": "cus_8421"}');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await confirmItIsMe(page, { password: ADMIN.password });
    await page.getByText('Copy it now: you will not see it again.').waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('row', { name: /Counted/ }).getByRole('link', { name: 'Counted' }).click();
    await page.getByText('40 left, set to 100 every day (UTC)').waitFor();
    await page.getByText('"customer_id": "cus_8421"').waitFor();

    await page.locator('#edit-limit-uses').fill('10');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText('10 left, set to 100 every day (UTC)').waitFor();
    await page.getByLabel('Language').selectOption('fr');
    await page.getByText('10 restantes, remises à 100 chaque jour (UTC)').waitFor();
    await page.getByLabel('Langue').selectOption('en');
    await page.getByRole('button', { name: 'Sign out' }).click();
  });

  it('sets a key\'s rate limit and allowlist in the create form and changes them on its page, with the API\'s checks, in English and French', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', level: 1 }).waitFor();
    await page.getByLabel('Name').fill('Limited');
    await page.getByLabel('users.list', { exact: true }).check();
    await page.locator('#key-limit-requests').fill('5');
    await page.getByRole('button', { name: 'Create the key' }).click();
    await page.getByText('Give both the number of requests and the seconds, or neither.').waitFor();
    await page.locator('#key-limit-seconds').fill('10');
    await page.locator('#key-limit-ips').fill('203.0.113.0/24');
    await page.getByRole('button', { name: 'Create the key' }).click();
    // A sensitive change: the page asks for the password (this administrator has no second factor), then creates the key.
    await confirmItIsMe(page, { password: ADMIN.password });
    await page.getByText('Copy it now: you will not see it again.').waitFor();
    await page.getByRole('button', { name: 'I have copied it' }).click();
    await page.getByRole('row', { name: /Limited/ }).getByRole('link', { name: 'Limited' }).click();
    await page.getByText('5 requests per 10 s').waitFor();
    await page.getByText('203.0.113.0/24', { exact: true }).waitFor();

    // A range with bits right of its prefix: the API's refusal, which names the range meant.
    await page.locator('#edit-limit-ips').fill('192.0.2.5/24');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText(/192\.0\.2\.5\/24 has bits set right of its prefix: write 192\.0\.2\.0\/24/).waitFor();
    await page.locator('#edit-limit-ips').fill('192.0.2.0/24');
    await page.locator('#edit-limit-requests').fill('2');
    await page.getByRole('button', { name: 'Save the limits' }).click();
    await page.getByText('2 requests per 10 s').waitFor();
    await page.getByText('192.0.2.0/24', { exact: true }).waitFor();

    // In French, the same checks in French.
    await page.getByLabel('Language').selectOption('fr');
    await page.locator('#edit-limit-seconds').fill('86401');
    await page.getByRole('button', { name: 'Enregistrer les limites' }).click();
    await page.getByText('Les secondes doivent être un entier de 1 à 86400.').waitFor();
    await page.getByLabel('Langue').selectOption('en');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  });

  it('manages roles and users: create a role, edit its permissions, create a user with it, edit, disable', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();

    await page.getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('link', { name: 'New role' }).click();
    await page.getByLabel('Name').fill('support');
    await page.getByLabel('Description').fill('Reads users');
    await page.getByLabel('users.list', { exact: true }).check();
    await page.getByLabel('users.read', { exact: true }).check();
    await page.getByLabel('Requires a second factor').check();
    await screenshot(page, 'role-create');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row', { name: /support/ }).getByText('users.list, users.read').waitFor();
    await page.getByRole('row', { name: /support/ }).getByText('second factor', { exact: true }).waitFor();
    await screenshot(page, 'roles');

    // Editing a role's permissions changes what its holders may do on their next request.
    await page.getByRole('link', { name: 'Edit the role support' }).click();
    await page.getByRole('heading', { name: 'Edit the role support' }).waitFor();
    expect(await page.getByLabel('Requires a second factor').isChecked()).toBe(true);
    await page.getByLabel('users.read', { exact: true }).uncheck();
    await page.getByLabel('Requires a second factor').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row', { name: /support/ }).getByText('users.list', { exact: true }).waitFor();
    const roles = (await (await get('/roles', { Authorization: `Bearer ${(await storedTokens(page)).accessToken}` })).json()) as { data: { name: string; permissions: string[]; requires_second_factor: boolean }[] };
    expect(roles.data.find((role) => role.name === 'support')).toMatchObject({ permissions: ['users.list'], requires_second_factor: false });
    await page.getByRole('link', { name: 'Edit the role support' }).click();
    await page.getByLabel('users.read', { exact: true }).check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('row', { name: /support/ }).getByText('users.list, users.read').waitFor();

    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('link', { name: 'New user' }).click();
    await page.getByLabel('E-mail').fill('grace@example.com');
    await page.getByLabel('First name').fill('Grace');
    await page.getByLabel('Last name').fill('Hopper');
    await page.getByLabel('support').check();
    await page.getByRole('button', { name: 'Create' }).click();
    // Creating a user is a sensitive change: the dialog asks for a fresh proof, then creates.
    await confirmItIsMe(page, { password: ADMIN.password });
    await page.getByRole('heading', { name: 'grace@example.com' }).waitFor();
    await page.getByLabel('First name').fill('Grace B.');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByText('grace@example.com is disabled and signed out everywhere.').waitFor();
    expect(await page.getByLabel('Status').inputValue()).toBe('disabled');

    await page.getByRole('link', { name: 'Back to the users' }).click();
    // The list is on screen (the person's page had a Status field of its own) before it is filtered.
    await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
    await page.getByRole('row', { name: /ada@example.com/ }).waitFor();
    await page.getByLabel('Status').selectOption('disabled');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('row', { name: /ada@example.com/ }).waitFor({ state: 'detached' });
    expect(await page.getByRole('row', { name: /ada@example.com/ }).count()).toBe(0);
    await page.getByRole('row', { name: /grace@example.com/ }).getByText('Grace B. Hopper').waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search e-mail or name').fill('nobody-matches-this');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No user matches.').waitFor();
    await page.getByLabel('Search e-mail or name').fill('');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('row', { name: /ada@example.com/ }).waitFor();
    await screenshot(page, 'users');

    // Pages of 20, followed by the server's cursor and back.
    await service.database.db
      .insertInto('users')
      .values(Array.from({ length: 25 }, (_, i) => userRow({ email: `bulk${String(i).padStart(2, '0')}@example.com`, first_name: 'Bulk', last_name: `User ${i}` })))
      .execute();
    await page.getByRole('button', { name: 'Filter' }).click();
    await waitForCount(page.getByRole('row'), 21);
    expect(await page.getByRole('row').count()).toBe(21);
    const firstPage = await page.getByRole('row').allTextContents();
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitForListPage(page, 2);
    expect(await page.getByRole('row').count()).toBe(1 + 27 - 20);
    const secondPage = await page.getByRole('row').allTextContents();
    expect(secondPage.slice(1).some((row) => firstPage.includes(row))).toBe(false);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForListPage(page, 1);
    expect(await page.getByRole('row').allTextContents()).toEqual(firstPage);
  });
});
