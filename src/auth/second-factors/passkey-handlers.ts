// Handlers of the signed-in person's passkeys (register, list, rename, remove) and of the
// passwordless sign-in with one. The WebAuthn JSON passes through as the browser made it.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import { refused } from '../../errors.js';
import { signedInUser } from '../caller.js';
import type { Principal } from '../principal.js';
import { NO_STORE, NO_STORE_TOKENS } from '../../http/no-store.js';

export function passkeyHandlers({ passkeys, signIn, users }: Pick<PlatformServices, 'passkeys' | 'signIn' | 'users'>) {
  /** The caller with the e-mail address the passkey is labelled with in the browser. */
  async function person(principal: Principal | null) {
    const me = signedInUser(principal);
    const user = await users.find(me.userId);
    // Disabled or deleted between authentication and here.
    if (!user) throw refused('invalid_token', 'The access token is unknown, expired or revoked.');
    return { userId: me.userId, sessionId: me.sessionId, email: user.email };
  }

  const startPasskeyRegistration: Handler<'startPasskeyRegistration'> = async ({ principal, request }) => ({
    status: 201,
    body: await passkeys.startRegistration(await person(principal), request),
    headers: NO_STORE,
  });

  const registerPasskey: Handler<'registerPasskey'> = async ({ principal, body, request }) => ({
    status: 201,
    body: await passkeys.register(await person(principal), body.name, body.credential, request),
    headers: NO_STORE,
  });

  const listMyPasskeys: Handler<'listMyPasskeys'> = async ({ principal }) => ({
    status: 200,
    body: { data: await passkeys.list(signedInUser(principal).userId) },
  });

  const renamePasskey: Handler<'renamePasskey'> = async ({ principal, path, body, request }) => ({
    status: 200,
    body: await passkeys.rename(await person(principal), path.id, body.name, request),
  });

  const removePasskey: Handler<'removePasskey'> = async ({ principal, path, request }) => {
    await passkeys.remove(await person(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  const startPasskeySignIn: Handler<'startPasskeySignIn'> = async ({ request }) => ({
    status: 201,
    body: await signIn.startWithPasskey(request),
    headers: NO_STORE,
  });

  const signInWithPasskey: Handler<'signInWithPasskey'> = async ({ body, request }) => ({
    status: 201,
    body: await signIn.withPasskey(body.credential, request),
    headers: NO_STORE_TOKENS,
  });

  return { startPasskeyRegistration, registerPasskey, listMyPasskeys, renamePasskey, removePasskey, startPasskeySignIn, signInWithPasskey };
}
