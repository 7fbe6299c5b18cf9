// Handlers of the Password recovery operations.
import type { PasswordResetService } from './service.js';
import type { Handler } from '../http/handler-types.js';
import { requireCaller } from '../auth/caller.js';

export function passwordResetHandlers({ passwordResets }: { passwordResets: PasswordResetService }) {
  const requestPasswordReset: Handler<'requestPasswordReset'> = async ({ body, request }) => {
    await passwordResets.request(body, request);
    return { status: 202, body: undefined };
  };

  const confirmPasswordReset: Handler<'confirmPasswordReset'> = async ({ body, request }) => {
    await passwordResets.confirm(body, request);
    return { status: 204, body: undefined };
  };

  const sendUserPasswordReset: Handler<'sendUserPasswordReset'> = async ({ path, body, principal, request }) => {
    await passwordResets.sendFor(requireCaller(principal), path.id, body?.language ?? 'en', request);
    return { status: 202, body: undefined };
  };

  return { requestPasswordReset, confirmPasswordReset, sendUserPasswordReset };
}
