// End-to-end harness: the real service on a random port over its own test database, and Debian's
// Chromium driven by playwright-core with a fresh profile. The test process builds the app itself,
// so a test can hand it a ManualClock: nothing in the service lets a request move its clock.
import { once } from 'node:events';
import { createServer, type RequestListener } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Kysely } from 'kysely';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { hashPassword } from '../../src/auth/secrets/passwords.js';
import { ADMIN_ROLE } from '../../src/auth/permissions.js';
import type { Database } from '../../src/db/schema.js';
import { systemClock, type Clock } from '../../src/clock.js';
import { PROJECT_ROOT } from '../../src/paths.js';
import { createTestApp, createTestDatabase } from './context.js';
import { startReconciliation } from '../../src/limits/admission/reconciliation.js';
import { userRow } from './rows.js';
import { vi } from 'vitest';
import { budget } from './budgets.js';

// Every file of browser flows gets the browser-flow budget as its tests' time limit (vitest's 30 s
// is a flow's time on a quiet machine, not on a busy one); Playwright's own budget per action still
// catches a step that never ends.
vi.setConfig({ testTimeout: budget({ browserFlow: 1 }) });

export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Without the networking flags Chromium keeps dialling Google's hosts, which this machine refuses. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
export const SCREENSHOTS_DIR = join(PROJECT_ROOT, 'test-results', 'screenshots');

/**
 * `env` may depend on the service's own address (a redirect URI back to it): it is then a function of it.
 * `host`: the name in `baseUrl` (the server listens on 127.0.0.1 either way); `localhost` for a
 * secure context, which WebAuthn needs (http://localhost is one, http://127.0.0.1 is not an
 * origin a passkey's relying-party id can be).
 */
export async function startService(
  options: { clock?: Clock; env?: Record<string, string | undefined> | ((baseUrl: string) => Record<string, string | undefined>); host?: '127.0.0.1' | 'localhost' } = {},
) {
  const database = await createTestDatabase();
  // Dropping the database at the end terminates its connections (57P01); that is expected then.
  database.pool.on('error', (err: Error & { code?: string }) => {
    if (err.code !== '57P01') throw err;
  });
  // Listening first, so the address is known before the app is configured.
  let app: RequestListener = (_req, res) => res.end();
  const server = createServer((req, res) => app(req, res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const baseUrl = `http://${options.host ?? '127.0.0.1'}:${(server.address() as AddressInfo).port}`;
  const env = typeof options.env === 'function' ? options.env(baseUrl) : options.env;
  const service = createTestApp(database.db, { clock: options.clock ?? systemClock, ...(env ? { env } : {}) });
  app = service.app;
  // The background step every server process runs (src/main.ts): key usage reaches the database.
  const reconciliation = startReconciliation(service.services.admission, service.deps.config.rateLimits.syncIntervalMs, service.deps.logger);
  return {
    ...service,
    database,
    baseUrl,
    async stop() {
      await reconciliation.stop();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await database.destroy();
    },
  };
}

export interface BrowserSession {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** A new Chromium with an empty profile; `locale` sets navigator.languages (and Accept-Language). */
export async function openBrowser(options: { locale?: string; permissions?: string[] } = {}): Promise<BrowserSession> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'backoffice-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_FLAGS,
    locale: options.locale ?? 'en-US',
    viewport: { width: 1280, height: 800 },
    permissions: options.permissions ?? [],
  });
  // Fail a step within the test's own timeout (30 s), with the locator that did not show up. 20 s,
  // not less: a step that takes well under a second alone can take over 10 s on a two-core machine
  // running the whole suite beside it.
  context.setDefaultTimeout(20_000);
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as test-results/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}

export interface Person {
  email: string;
  password: string;
  firstName: string;
  lastName: string;
}

/** An active user holding the built-in admin role, written straight into the test database. */
export function createAdministrator(db: Kysely<Database>, person: Person): Promise<void> {
  return createPerson(db, person, ADMIN_ROLE);
}

/** An active user holding one existing role, written straight into the test database. */
export async function createPerson(db: Kysely<Database>, person: Person, role: string): Promise<void> {
  const user = await db
    .insertInto('users')
    .values(userRow({ email: person.email, first_name: person.firstName, last_name: person.lastName, password_hash: await hashPassword(person.password) }))
    .returning('id')
    .executeTakeFirstOrThrow();
  const held = await db.selectFrom('roles').select('id').where('name', '=', role).executeTakeFirstOrThrow();
  await db.insertInto('user_roles').values({ user_id: user.id, role_id: held.id }).execute();
}

/** Fills in and sends the sign-in form. */
export async function signIn(page: Page, baseUrl: string, person: Pick<Person, 'email' | 'password'>): Promise<void> {
  if (!page.url().startsWith(baseUrl)) await page.goto(`${baseUrl}/`);
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
  await page.getByLabel('E-mail address').fill(person.email);
  await page.getByLabel('Password').fill(person.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/**
 * Answers the back office's step-up dialog (a sensitive change, docs/AUTH.md "Step-up") with the
 * password (a person without a second factor) or a code, in English.
 */
export async function confirmItIsMe(page: Page, proof: { password: string } | { code: string }): Promise<void> {
  const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
  await dialog.waitFor();
  if ('password' in proof) await dialog.getByLabel('Your password').fill(proof.password);
  else await dialog.getByLabel('Code from the app').fill(proof.code);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await dialog.waitFor({ state: 'detached' });
}

/** The token set the page keeps (see docs/WEB.md). */
export async function storedTokens(page: Page): Promise<{ accessToken: string; refreshToken: string }> {
  const raw = await readStorage(page, 'backoffice.tokens');
  if (!raw) throw new Error('The page holds no token set');
  return JSON.parse(raw) as { accessToken: string; refreshToken: string };
}

/** A localStorage item of the page. (Page scripts are passed as strings: the service's tsconfig has no DOM types.) */
export function readStorage(page: Page, key: string): Promise<string | null> {
  return page.evaluate(`localStorage.getItem(${JSON.stringify(key)})`);
}

/** The phone the back office is tried on: an iPhone 12-14's CSS viewport. */
export const PHONE = { width: 390, height: 844 } as const;
export const DESKTOP = { width: 1280, height: 800 } as const;

/**
 * Where an element is on the screen, and whether the focus is in it (a "shown once" panel must be
 * both: in view and focused). Page scripts are strings: the service's tsconfig has no DOM types.
 */
export function placement(page: Page, testId: string): Promise<{ top: number; bottom: number; viewportHeight: number; focusInside: boolean }> {
  return page.evaluate(`(() => {
    const element = document.querySelector('[data-testid=${JSON.stringify(testId)}]');
    if (!element) throw new Error('No element with data-testid ${testId}');
    const box = element.getBoundingClientRect();
    return { top: box.top, bottom: box.bottom, viewportHeight: window.innerHeight, focusInside: element.contains(document.activeElement) };
  })()`);
}

/** Scrolls the page to its bottom, where a person is after filling in a long form. */
export async function scrollToBottom(page: Page): Promise<void> {
  await page.evaluate('window.scrollTo(0, document.documentElement.scrollHeight)');
}

// Waiting for what the page says: a browser test waits for the page to show the outcome
// (a text, a number of rows, a state), as a person would, through Playwright's own waiting on a
// locator. Never for a time budget: expect.poll gives up after a second, which a loaded machine
// overruns. A test that needs the server's state reads it once the page confirmed the change.

/** Waits until the element `locator` shows exactly `text` (its whole text content). */
export async function waitForText(locator: Locator, text: string): Promise<void> {
  await locator.filter({ hasText: new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).waitFor();
}

/** Waits until `locator` matches exactly `count` elements (no element past them, and the last of them there). */
export async function waitForCount(locator: Locator, count: number): Promise<void> {
  for (;;) {
    await locator.nth(count).waitFor({ state: 'detached' });
    if (count > 0) await locator.nth(count - 1).waitFor({ state: 'attached' });
    if ((await locator.count()) === count) return;
  }
}

/** Waits until a paged list (web/src/ui.tsx Pager) shows page `number`, loaded. */
export async function waitForListPage(page: Page, number: number): Promise<void> {
  await page.getByRole('status').filter({ hasText: new RegExp(`^Page ${number}$`) }).waitFor();
}
