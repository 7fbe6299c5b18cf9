// The browser's side of passkeys (WebAuthn, @simplewebauthn/browser): the service's options go to
// the browser as they came (the contract passes WebAuthn's JSON through, keys not inflected), and
// the browser's answer goes back the same way. A person who closes the browser's dialog gets a
// message of our own, not the browser's.
import { startAuthentication, startRegistration, WebAuthnError, type PublicKeyCredentialCreationOptionsJSON, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';

type Json = Record<string, unknown>;
const asJson = (value: object): Json => ({ ...value });

/** The browser made no passkey answer: cancelled, timed out, or no passkey for this site. */
export class PasskeyCancelled extends Error {
  override name = 'PasskeyCancelled';
}

async function ceremony<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof WebAuthnError || (err instanceof Error && err.name === 'NotAllowedError')) throw new PasskeyCancelled(err.message);
    throw err;
  }
}

/** Makes a passkey from creation options; the answer to send to POST /me/passkeys. */
export async function createPasskey(options: Json): Promise<Json> {
  return asJson(await ceremony(() => startRegistration({ optionsJSON: options as unknown as PublicKeyCredentialCreationOptionsJSON })));
}

/** Signs request options with a passkey; the answer to send back. */
export async function usePasskey(options: Json): Promise<Json> {
  return asJson(await ceremony(() => startAuthentication({ optionsJSON: options as unknown as PublicKeyCredentialRequestOptionsJSON })));
}
