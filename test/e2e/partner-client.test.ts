// The back office talks to the service through the partners' client (clients/typescript), so the
// client's rules are exercised by every person who uses the back office: checked here in Chromium
// against the real service, on the requests the page really sends.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Request as BrowserRequest } from 'playwright-core';
import { createAdministrator, openBrowser, signIn, startService, type BrowserSession } from '../support/e2e.js';

const ADMIN = { email: 'katherine@example.com', password: 'correct horse battery staple', firstName: 'Katherine', lastName: 'Johnson' };
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

describe('the back office on the partners’ client', () => {
  it('a create sent from a form carries an Idempotency-Key and the key style, and a page whose first read meets a 503 is read again', async () => {
    const { page } = browser;
    await signIn(page, service.baseUrl, ADMIN);
    await page.getByRole('heading', { name: 'Home' }).waitFor();
    const creates: BrowserRequest[] = [];
    page.on('request', (request) => {
      if (request.method() === 'POST' && new URL(request.url()).pathname === '/tasks') creates.push(request);
    });
    await page.goto(`${service.baseUrl}/#/tasks/new`);
    await page.getByLabel('Title').fill('Compute the re-entry trajectory');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Compute the re-entry trajectory' }).waitFor();
    expect(creates).toHaveLength(1);
    const headers = await creates[0]!.allHeaders();
    expect(headers['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(headers['x-api-inflection']).toBe('snake');

    // The service is briefly unavailable for the list: the client retries a read, the person sees the list.
    let refused = 0;
    await page.route(/\/tasks\?/, async (route) => {
      if (refused === 0 && route.request().method() === 'GET') {
        refused += 1;
        await route.fulfill({ status: 503, headers: { 'Content-Type': 'application/problem+json', 'Retry-After': '1' }, body: JSON.stringify({ type: 'about:blank', title: 'Service Unavailable', status: 503, code: 'service_unavailable', detail: 'Draining.' }) });
        return;
      }
      await route.continue();
    });
    await page.goto(`${service.baseUrl}/#/tasks`);
    await page.getByRole('row', { name: /Compute the re-entry trajectory/ }).waitFor();
    expect(refused).toBe(1);
    await page.unrouteAll();
  });
});
