// Step-up in a real Chromium (docs/AUTH.md, "Step-up"): a sensitive change answered
// 403 step_up_required opens a dialog asking for a code (or a recovery code); once the API accepts
// it, the change is made without starting over. In English, then in French.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdministrator, openBrowser, screenshot, signIn, startService, waitForCount } from '../support/e2e.js';
import { totpCode, untilStepHasLeft } from '../support/second-factor.js';
import { BUDGET_MS, budget } from '../support/budgets.js';
import { makeIdentityProvider } from '../support/access-fixtures.js';

let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService();
});
afterAll(() => service.stop());

const person = { email: 'katherine@example.com', password: 'a long passphrase of my own', firstName: 'Katherine', lastName: 'Johnson' };
const later = (seconds: number) => new Date(Date.now() + seconds * 1000);

/** Enrols an authenticator app through the API, with the code of the step before now (so that the browser's sign-in can use now's). */
async function enrol(): Promise<string> {
  const send = (path: string, body: object, token?: string) =>
    fetch(`${service.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) }).then(
      async (r) => ({ status: r.status, body: (await r.json()) as Record<string, string> }),
    );
  const { body: set } = await send('/sessions', { session: { email: person.email, password: person.password } });
  expect((await send('/sessions/current/step-up', { password: person.password }, set.access_token)).status).toBe(200);
  const { body: started } = await send('/me/totp', {}, set.access_token);
  // The step before now stays good only until the next step begins: start the confirmation early in a step.
  await untilStepHasLeft(15_000);
  expect((await send('/me/totp/confirm', { totp_code: totpCode(started.secret!, later(-30)) }, set.access_token)).status).toBe(200);
  return started.secret!;
}

describe('step-up in the back office', () => {
  it('asks for a code before new recovery codes, says when it is wrong, then makes them; in French, removes the app after a recovery code', { timeout: budget({ browserFlow: 2 }) }, async () => {
    await createAdministrator(service.database.db, person);
    const secret = await enrol();
    let recoveryCodes: string[] = [];

    const english = await openBrowser();
    try {
      const { page } = english;
      page.on('dialog', (confirm) => void confirm.accept());
      await signIn(page, service.baseUrl, person);
      // The password's verification may take long on a busy machine.
      await page.getByRole('heading', { name: 'Second step' }).waitFor({ timeout: BUDGET_MS.passwordHash });
      await page.getByLabel('Code from the app').fill(totpCode(secret, new Date()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('link', { name: 'Security' }).click();
      await page.getByRole('button', { name: 'New recovery codes' }).click();

      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByText('This change is sensitive. Enter the 6-digit code your authenticator app shows.').waitFor();
      const right = totpCode(secret, later(30));
      await dialog.getByLabel('Code from the app').fill(right === '000000' ? '111111' : '000000');
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      await dialog.getByText('This code is wrong or was already used.').waitFor();
      await screenshot(page, 'step-up-code');
      await dialog.getByLabel('Code from the app').fill(right);
      await dialog.getByRole('button', { name: 'Confirm' }).click();
      // The change is retried on its own: the new codes are shown.
      await page.getByTestId('recovery-codes').waitFor({ timeout: BUDGET_MS.passwordHash });
      const codes = page.getByTestId('recovery-codes').getByRole('listitem');
      await waitForCount(codes, 10);
      expect(await codes.count()).toBe(10);
      recoveryCodes = (await codes.allTextContents()).map((code) => code.trim());
      expect(await dialog.count()).toBe(0);
    } finally {
      await english.close();
    }

    const french = await openBrowser();
    try {
      const { page } = french;
      page.on('dialog', (confirm) => void confirm.accept());
      await signIn(page, service.baseUrl, person);
      await page.getByRole('heading', { name: 'Second step' }).waitFor({ timeout: BUDGET_MS.passwordHash });
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').fill(recoveryCodes[0]!);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByLabel('Language').selectOption('fr');
      await page.getByRole('link', { name: 'Sécurité' }).click();
      await page.getByRole('button', { name: 'Retirer l’application' }).click();

      const dialog = page.getByRole('dialog', { name: 'Confirmez votre identité' });
      await dialog.getByRole('button', { name: 'Utiliser plutôt un code de secours' }).click();
      await dialog.getByLabel('Code de secours').fill(recoveryCodes[1]!);
      await screenshot(page, 'step-up-recovery-code-fr');
      await dialog.getByRole('button', { name: 'Confirmer' }).click();
      await page.getByRole('button', { name: 'Configurer une application d’authentification' }).waitFor();
    } finally {
      await french.close();
    }
    const factors = await service.database.db.selectFrom('second_factors').select('second_factors.id').innerJoin('users', 'users.id', 'second_factors.user_id').where('users.email', '=', person.email).execute();
    expect(factors).toEqual([]);
  });
  it('says where a proof is to be had when the session has none left (its company retired the password), and asks for no password', { timeout: budget({ browserFlow: 1 }) }, async () => {
    const retired = { email: 'dorothy@retired.example', password: 'a passphrase the company retired', firstName: 'Dorothy', lastName: 'Vaughan' };
    await createAdministrator(service.database.db, retired);
    const session = await openBrowser();
    try {
      const { page } = session;
      await signIn(page, service.baseUrl, retired);
      await page.getByRole('heading', { name: 'Home' }).waitFor({ timeout: BUDGET_MS.passwordHash });
      // The company turns company sign-in on for the domain: the password proves nothing any more.
      const provider = await makeIdentityProvider(service.database.db, 'https://idp.retired.example', ['retired.example']);
      await service.database.db.updateTable('identity_providers').set({ sso_required: true }).where('id', '=', provider).execute();
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.getByLabel('Name').fill('Reporting');
      await page.getByLabel('users.list', { exact: true }).check();
      await page.getByRole('button', { name: 'Create the key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByText('sign out, then sign in again through your organisation’s identity provider').waitFor();
      expect(await dialog.getByLabel('Your password').count()).toBe(0);
      await dialog.getByRole('button', { name: 'Close' }).click();
      expect(await dialog.count()).toBe(0);
      expect(await service.database.db.selectFrom('api_keys').select('id').where('name', '=', 'Reporting').execute()).toEqual([]);
    } finally {
      await session.close();
    }
  });
});
