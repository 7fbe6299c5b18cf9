// Handlers of the e-mail address change (and its French paths, /moi/changement-email).
import type { Handler } from '../http/handler-types.js';
import { signedInUser } from '../auth/caller.js';
import type { EmailChangeService } from './service.js';

export function emailChangeHandlers({ emailChanges }: { emailChanges: EmailChangeService }) {
  const requestEmailChange: Handler<'requestEmailChange'> = async ({ body, principal, request }) => {
    await emailChanges.request(signedInUser(principal), body, request);
    return { status: 202, body: undefined };
  };

  const confirmEmailChange: Handler<'confirmEmailChange'> = async ({ body, principal, request }) => {
    await emailChanges.confirm(signedInUser(principal), body, request);
    return { status: 204, body: undefined };
  };

  return { requestEmailChange, confirmEmailChange };
}
