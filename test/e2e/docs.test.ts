// The reference at /docs shares its origin with the back office, which keeps its refresh token in
// localStorage. A script on the reference page (Redoc's own, or one slipped into it) must not be
// able to read it: the page runs sandboxed in an opaque origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, startService } from '../support/e2e.js';

let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

describe('the reference page', () => {
  it("a script on /docs cannot read the back office's refresh token from localStorage", async () => {
    const browser = await openBrowser();
    try {
      const { page } = browser;
      await page.goto(`${service.baseUrl}/`);
      await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
      const stolen = JSON.stringify({ accessToken: 'boa_secret', refreshToken: 'bor_secret' });
      await page.evaluate(`localStorage.setItem('backoffice.tokens', ${JSON.stringify(stolen)})`);
      expect(await page.evaluate(`localStorage.getItem('backoffice.tokens')`)).toBe(stolen);

      await page.addInitScript(`try { window.firstRead = 'read: ' + localStorage.getItem('backoffice.tokens'); } catch (err) { window.firstRead = 'refused: ' + err.name; }`);
      await page.goto(`${service.baseUrl}/docs`);
      // The reference still works: Redoc's scripts ran and rendered it.
      await page.getByRole('heading', { name: /Back-office API/ }).first().waitFor();
      await page.getByText('Response key style').first().waitFor();
      // Read by a script that runs on /docs before anything else, then by one that runs after Redoc.
      const read = `(() => { try { return 'read: ' + localStorage.getItem('backoffice.tokens'); } catch (err) { return 'refused: ' + err.name; } })()`;
      expect(await page.evaluate<string>('window.firstRead')).toBe('refused: SecurityError');
      expect(await page.evaluate<string>(read)).toBe('read: null'); // the page's own empty stand-in
      expect(await page.evaluate<string>('String(window.origin)')).toBe('null');
    } finally {
      await browser.close();
    }
  });
});
