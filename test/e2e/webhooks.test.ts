// The back office's Webhooks page (docs/EVENTS.md) in a real Chromium, as an
// administrator uses it: creates an endpoint for a real receiver on loopback, keeps the secret
// shown once (Copy), sends a test event and sees it delivered, replays it (the receiver gets the
// same webhook-id, both verified with the `standardwebhooks` library as a partner would), changes
// the event types and disables it, reads the page in French, and deletes it. A person without
// webhooks.manage has no Webhooks entry.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { budget } from '../support/budgets.js';
import { confirmItIsMe, createAdministrator, createPerson, openBrowser, screenshot, signIn, startService } from '../support/e2e.js';
import { startReceiver } from '../support/webhook-receiver.js';
import { roleRow } from '../support/rows.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const READER = { email: 'grace@example.com', password: 'another long passphrase here', firstName: 'Grace', lastName: 'Hopper' };
let service: Awaited<ReturnType<typeof startService>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  service = await startService({ env: { WEBHOOKS_ALLOW_PRIVATE_URLS: 'true' } });
  receiver = await startReceiver();
  await createAdministrator(service.database.db, ADMIN);
  service.services.deliveries.start(service.database.url);
}, budget({ passwordHash: 2 }));
afterAll(async () => {
  await service?.services.deliveries.stop();
  await receiver?.close();
  await service?.stop();
});

describe('webhooks in the back office', () => {
  it('an administrator creates an endpoint (secret once, Copy), sends a test event, replays it, changes and disables it (a stale form saves nothing), and deletes it', { timeout: budget({ browserFlow: 2 }) }, async () => {
    const browser = await openBrowser({ permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Webhooks', exact: true }).waitFor();
      await page.getByText('No webhook endpoint yet.').waitFor();

      await page.getByRole('link', { name: 'New endpoint' }).click();
      const create = page.locator('form.panel');
      await create.getByLabel('URL').fill(receiver.url);
      await create.getByLabel('Description').fill('Calendar mirror');
      await create.getByLabel('task.created').check();
      await create.getByRole('button', { name: 'Create the endpoint' }).click();
      // An endpoint hears events after the session: the dialog asks for a fresh proof, then creates.
      await confirmItIsMe(page, { password: ADMIN.password });
      await page.getByText('Copy it now: it will not be shown again.').waitFor();
      const secret = (await page.getByTestId('webhook-secret').textContent())!.trim();
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole('button', { name: 'Copy' }).click();
      await page.getByText('Copied.').waitFor();
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret);
      await page.getByRole('button', { name: 'I have kept it' }).click();
      const row = page.getByRole('row', { name: new RegExp(receiver.url.replace(/[.]/g, '\\.')) });
      await row.waitFor();
      expect(await row.textContent()).toContain('task.created');
      expect(await page.content()).not.toContain(secret);

      // A test event, delivered and shown; then replayed with the same webhook-id.
      await page.getByRole('link', { name: `Open the endpoint ${receiver.url}` }).click();
      const edit = page.locator('form.panel');
      await edit.getByRole('button', { name: 'Send a test event' }).click();
      await page.getByText('Test event queued.').waitFor();
      await receiver.until(1);
      const deliveries = page.getByRole('region', { name: 'Recent deliveries' });
      // The page reads the deliveries when asked (Refresh): ask until it shows this one delivered.
      const delivered = deliveries.getByRole('row', { name: /webhook_endpoint\.test.*delivered/ });
      for (;;) {
        await deliveries.getByRole('button', { name: 'Refresh' }).click();
        await page.locator('section[aria-labelledby="webhook-deliveries-title"][aria-busy="false"]').waitFor();
        if ((await delivered.count()) === 1) break;
      }
      expect(await delivered.count()).toBe(1);
      await screenshot(page, 'webhooks');
      await deliveries.getByRole('button', { name: 'Replay the delivery of webhook_endpoint.test' }).click();
      await page.getByText('Delivery queued again, with the same webhook-id.').waitFor();
      await receiver.until(2);
      const [first, second] = receiver.received;
      expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
      for (const got of [first!, second!]) {
        new Webhook(secret).verify(got.body, {
          'webhook-id': got.headers['webhook-id'] as string,
          'webhook-timestamp': got.headers['webhook-timestamp'] as string,
          'webhook-signature': got.headers['webhook-signature'] as string,
        });
      }

      // Changed by someone else while the form is open: saving changes nothing and shows it as it is now.
      await edit.getByLabel('Description').fill('My stale edit');
      await service.database.db.updateTable('webhook_endpoints').set({ description: 'Changed meanwhile' }).execute();
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Someone else changed this endpoint while you were editing it.', { exact: false }).waitFor();
      expect(await page.locator('form.panel').getByLabel('Description').inputValue()).toBe('Changed meanwhile');
      expect((await service.database.db.selectFrom('webhook_endpoints').select('description').executeTakeFirstOrThrow()).description).toBe('Changed meanwhile');

      // Another event type, and disabled.
      await edit.getByLabel('task.deleted').check();
      await edit.getByLabel('Enabled', { exact: true }).uncheck();
      await edit.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('row', { name: /task\.created, task\.deleted.*Disabled/ }).waitFor();
      const saved = await service.database.db.selectFrom('webhook_endpoints').select(['event_types', 'enabled']).executeTakeFirstOrThrow();
      expect(saved).toEqual({ event_types: ['task.created', 'task.deleted'], enabled: false });

      // In French, the same page.
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('heading', { name: 'Livraisons récentes' }).waitFor();
      await page.getByRole('columnheader', { name: 'Propriétaire' }).waitFor();
      await page.getByLabel('Langue').selectOption('en');

      page.once('dialog', (dialog) => void dialog.accept());
      await page.locator('form.panel').getByRole('button', { name: 'Delete this endpoint' }).click();
      await page.getByText('No webhook endpoint yet.').waitFor();
      expect(await service.database.db.selectFrom('webhook_endpoints').select('id').execute()).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it('a person without webhooks.manage has no Webhooks entry', { timeout: budget({ browserFlow: 1, passwordHash: 1 }) }, async () => {
    const role = await service.database.db.insertInto('roles').values(roleRow({ name: 'task-reader' })).returning('id').executeTakeFirstOrThrow();
    await service.database.db.insertInto('role_permissions').values({ role_id: role.id, permission: 'tasks.list' }).execute();
    await createPerson(service.database.db, READER, 'task-reader');
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, READER);
      const nav = page.getByRole('navigation', { name: 'Main' });
      await nav.getByRole('link', { name: 'Home' }).waitFor();
      expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
    } finally {
      await browser.close();
    }
  });
});
