// The lists the back office offers come from the contract: the audit journal's event
// filter offers every AuditEventType of generated/openapi.json, and the webhook form every
// EventType, so neither can fall behind when the contract gains a value.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budget } from '../support/budgets.js';
import { createAdministrator, openBrowser, signIn, startService, storedTokens } from '../support/e2e.js';
import { PROJECT_ROOT } from '../../src/paths.js';

const ADMIN = { email: 'ada@example.com', password: 'correct horse battery staple', firstName: 'Ada', lastName: 'Lovelace' };
const schemas = (JSON.parse(readFileSync(join(PROJECT_ROOT, 'generated', 'openapi.json'), 'utf8')) as { components: { schemas: Record<string, { enum: string[] }> } }).components.schemas;
let service: Awaited<ReturnType<typeof startService>>;

beforeAll(async () => {
  service = await startService();
  await createAdministrator(service.database.db, ADMIN);
});
afterAll(() => service?.stop());

describe('lists from the contract', () => {
  it('the audit filter offers every audit event type (and people by name), and the webhook form every event type', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await signIn(page, service.baseUrl, ADMIN);
      await page.getByRole('heading', { name: 'Home' }).waitFor();

      await page.goto(`${service.baseUrl}/#/audit`);
      await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor();
      const offered = await page.getByLabel('Event', { exact: true }).locator('option').evaluateAll((options) => options.map((option) => (option as unknown as { value: string }).value));
      expect(offered).toEqual(['', ...schemas.AuditEventType!.enum]);
      expect(offered.length).toBeGreaterThan(40);
      // Each by its name in the person's language.
      expect(await page.getByLabel('Event', { exact: true }).locator('option[value="second_factor_enrolled"]').textContent()).toBe('Second factor added');

      // "Done by" and "Concerning" offer the people by name (the field takes the id).
      await page.locator('#audit-known option[label="Ada Lovelace (ada@example.com)"]').waitFor({ state: 'attached' });
      expect(await page.getByLabel('Done by (a person or key, or an id)').getAttribute('list')).toBe('audit-known');

      // In the changes, a person's id is shown as their name.
      const { accessToken } = await storedTokens(page);
      const me = (await (await fetch(`${service.baseUrl}/me`, { headers: { Authorization: `Bearer ${accessToken}` } })).json()) as { user: { id: string } };
      const task = await fetch(`${service.baseUrl}/tasks`, { method: 'POST', headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ title: 'Budget', assignee_id: me.user.id }) });
      expect(task.status).toBe(201);
      await page.getByLabel('Event', { exact: true }).selectOption('task_created');
      await page.getByRole('button', { name: 'Filter' }).click();
      const changes = page.locator('tr[data-event-type="task_created"] .changes');
      await changes.filter({ hasText: 'assignee: nothing → Ada Lovelace' }).waitFor();
      expect(await changes.textContent()).not.toContain(me.user.id);

      await page.goto(`${service.baseUrl}/#/webhooks/new`);
      const form = page.locator('form.panel');
      await form.getByLabel('URL').waitFor();
      const types = await form.locator('input[type="checkbox"]').evaluateAll((boxes) => boxes.map((box) => (box as unknown as { value: string; parentElement: { textContent: string } }).parentElement.textContent.trim()));
      for (const type of schemas.EventType!.enum) expect(types, type).toContain(type);
    } finally {
      await browser.close();
    }
  });
});
