// Passkeys in a real Chromium (docs/AUTH.md, "Passkeys"), with the DevTools virtual
// authenticator standing in for the device's (a platform authenticator: CTAP2, internal, resident
// keys, user verification that always succeeds), so the browser makes and signs with real
// credentials through @simplewebauthn/browser. WebAuthn needs a secure context: the back office is
// served on http://localhost:<port>, PASSKEY_RP_ID=localhost, PASSKEY_ORIGINS that origin.
//
// One person, as they would: signs in with the password, adds a passkey on the Security page (the
// step-up dialog asks for the password: no second factor yet), names it and sees it listed, keeps
// the recovery codes; signs out and back in with the password and the passkey as the second step;
// signs out and in with the passkey alone; changes the password, which asks for a fresh proof, given
// with the passkey; removes the passkey. The page's words and the server's rows are both checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CDPSession, Page } from 'playwright-core';
import { confirmItIsMe, createAdministrator, openBrowser, screenshot, signIn, startService, waitForCount } from '../support/e2e.js';
import { BUDGET_MS, budget } from '../support/budgets.js';

let service: Awaited<ReturnType<typeof startService>>;
beforeAll(async () => {
  service = await startService({ host: 'localhost', env: (baseUrl) => ({ PASSKEY_RP_ID: 'localhost', PASSKEY_ORIGINS: baseUrl }) });
});
afterAll(() => service.stop());

const person = { email: 'ada@example.com', password: 'a long passphrase of my own', firstName: 'Ada', lastName: 'Lovelace' };
const newPassword = 'another long passphrase, mine too';

/** The DevTools virtual authenticator of the page: a platform authenticator that verifies its user. */
async function addVirtualAuthenticator(cdp: CDPSession): Promise<string> {
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return authenticatorId;
}

const db = () => service.database.db;
const userId = async () => (await db().selectFrom('users').select('id').where('email', '=', person.email).executeTakeFirstOrThrow()).id;
const passkeyRows = async () => db().selectFrom('second_factors').select(['id', 'name', 'sign_count', 'credential_id', 'last_used_at']).where('user_id', '=', await userId()).where('kind', '=', 'passkey').execute();
/** The newest session of the person (the page's own). */
const newestSession = async () =>
  db().selectFrom('sessions').select(['id', 'authentication_method', 'step_up_method', 'stepped_up_at', 'revoked_at', 'ended_at']).where('user_id', '=', await userId()).orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();

async function signOut(page: Page) {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in', exact: true }).waitFor();
}

describe('passkeys in the back office, with the DevTools virtual authenticator', () => {
  it('registers a named passkey, signs in with it as the second step and alone, steps up with it, and removes it', { timeout: budget({ browserFlow: 1, passwordHash: 4 }) }, async () => {
    await createAdministrator(db(), person);
    const browser = await openBrowser();
    try {
      const { page, context } = browser;
      page.on('dialog', (confirm) => void confirm.accept());
      const cdp = await context.newCDPSession(page);
      const authenticatorId = await addVirtualAuthenticator(cdp);
      const credentialsHeld = async () => (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;

      // 1. The password, then a passkey added on the Security page and named.
      await signIn(page, service.baseUrl, person);
      await page.getByRole('link', { name: 'Security' }).click({ timeout: BUDGET_MS.passwordHash });
      await page.getByText('No passkey yet.').waitFor();
      await page.getByLabel('Name of the new passkey').fill('Work laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      // Adding a passkey is a sensitive change; with no second factor yet, the password proves it.
      await confirmItIsMe(page, { password: person.password });
      // The first second factor brings the recovery codes.
      const codes = page.getByTestId('recovery-codes').getByRole('listitem');
      await page.getByTestId('recovery-codes').waitFor({ timeout: BUDGET_MS.passwordHash });
      await waitForCount(codes, 10);
      expect(await codes.count()).toBe(10);
      await page.getByRole('button', { name: 'I have kept them' }).click();
      const listed = page.getByRole('list', { name: 'Passkeys' }).getByRole('listitem');
      await waitForCount(listed, 1);
      expect(await listed.count()).toBe(1);
      await listed.getByText('Work laptop', { exact: true }).waitFor();
      await listed.getByText('Not used to sign in yet.').waitFor();
      await screenshot(page, 'passkey-registered');

      // DevTools says the credential id in base64, WebAuthn's JSON (and the row) in base64url.
      const [held] = await credentialsHeld();
      expect(held?.isResidentCredential).toBe(true);
      const [registered] = await passkeyRows();
      expect(registered).toMatchObject({ name: 'Work laptop', credential_id: Buffer.from(held!.credentialId, 'base64').toString('base64url'), last_used_at: null });
      const counterAt = [Number(registered!.sign_count)];

      // 2. Signed out, back with the password and the passkey as the second step.
      await signOut(page);
      await signIn(page, service.baseUrl, person);
      await page.getByRole('heading', { name: 'Second step' }).waitFor({ timeout: BUDGET_MS.passwordHash });
      // The passkey is offered first.
      await page.getByText('Confirm with one of your passkeys (fingerprint, face or PIN on your device).').waitFor();
      await page.getByRole('button', { name: 'Use my passkey' }).click();
      await page.getByRole('link', { name: 'Security' }).waitFor();
      expect((await newestSession()).authentication_method).toBe('password_passkey');
      counterAt.push(Number((await passkeyRows())[0]!.sign_count));

      // 3. Signed out, back with the passkey alone: the browser finds it (a discoverable credential).
      await signOut(page);
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('link', { name: 'Security' }).waitFor();
      const passwordless = await newestSession();
      expect(passwordless.authentication_method).toBe('passkey');
      expect(passwordless.step_up_method).toBeNull(); // signing in is no proof
      counterAt.push(Number((await passkeyRows())[0]!.sign_count));

      // 4. A sensitive change: the new password waits for a fresh proof, given with the passkey.
      await page.getByRole('link', { name: 'Password' }).click();
      await page.getByLabel('Current password').fill(person.password);
      await page.getByLabel('New password', { exact: true }).fill(newPassword);
      await page.getByLabel('New password again').fill(newPassword);
      await page.getByRole('button', { name: 'Change my password' }).click();
      const dialog = page.getByRole('dialog', { name: 'Confirm it is you' });
      await dialog.getByText('This change is sensitive. Confirm it with one of your passkeys.').waitFor();
      await screenshot(page, 'passkey-step-up');
      await dialog.getByRole('button', { name: 'Use my passkey' }).click();
      await dialog.waitFor({ state: 'detached', timeout: BUDGET_MS.passwordHash });
      await page.getByText('Your password is changed. Your other sessions were signed out.').waitFor({ timeout: BUDGET_MS.passwordHash });
      const steppedUp = await newestSession();
      expect(steppedUp).toMatchObject({ id: passwordless.id, step_up_method: 'passkey', revoked_at: null, ended_at: null });
      expect(steppedUp.stepped_up_at).not.toBeNull();
      counterAt.push(Number((await passkeyRows())[0]!.sign_count));

      // Every use moved the signature counter forward, as the authenticator counted it.
      for (let i = 1; i < counterAt.length; i++) expect(counterAt[i]).toBeGreaterThan(counterAt[i - 1]!);
      expect(counterAt.at(-1)).toBe((await credentialsHeld())[0]!.signCount);
      const journal = await db().selectFrom('security_events').select(['type', 'details']).where('type', 'in', ['session_stepped_up', 'sign_in_succeeded', 'second_factor_failed']).orderBy('id').execute();
      expect(journal.filter((e) => e.type === 'second_factor_failed')).toEqual([]);
      expect(journal.filter((e) => e.type === 'session_stepped_up').map((e) => (e.details as { method: string }).method)).toEqual(['password', 'passkey']);

      // 5. The passkey removed (the proof is still fresh: no second dialog).
      await page.getByRole('link', { name: 'Security' }).click();
      await listed.getByText('Work laptop', { exact: true }).waitFor();
      await page.getByRole('button', { name: 'Remove Work laptop' }).click();
      await page.getByText('No passkey yet.').waitFor();
      expect(await passkeyRows()).toEqual([]);
      await screenshot(page, 'passkey-removed');
    } finally {
      await browser.close();
    }
  });
});
