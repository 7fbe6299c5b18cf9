// Handlers of the signed-in person's second factors: the overview, enrolling and removing an
// authenticator app, new recovery codes; the step-up of the current session (src/auth/sessions/step-up.ts).
// Keys and codes are answered once, never stored in clear.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import { refused } from '../../errors.js';
import { requireCaller, signedInUser } from '../caller.js';
import type { Principal } from '../principal.js';
import { NO_STORE } from '../../http/no-store.js';

export function secondFactorHandlers({ secondFactors, secondFactorResets, stepUp, users }: Pick<PlatformServices, 'secondFactors' | 'secondFactorResets' | 'stepUp' | 'users'>) {
  /** The caller with the e-mail address the authenticator app is labelled with. */
  async function person(principal: Principal | null) {
    const me = signedInUser(principal);
    const user = await users.find(me.userId);
    // Disabled or deleted between authentication and here.
    if (!user) throw refused('invalid_token', 'The access token is unknown, expired or revoked.');
    return { userId: me.userId, sessionId: me.sessionId, email: user.email };
  }

  const getMySecondFactors: Handler<'getMySecondFactors'> = async ({ principal }) => ({
    status: 200,
    body: await secondFactors.overview(signedInUser(principal).userId),
  });

  const startTotpEnrolment: Handler<'startTotpEnrolment'> = async ({ principal }) => ({
    status: 201,
    body: await secondFactors.startTotp(await person(principal)),
    headers: NO_STORE,
  });

  const confirmTotpEnrolment: Handler<'confirmTotpEnrolment'> = async ({ principal, body, request }) => ({
    status: 200,
    body: { recovery_codes: await secondFactors.confirmTotp(await person(principal), body.totp_code, request) },
    headers: NO_STORE,
  });

  const removeTotp: Handler<'removeTotp'> = async ({ principal, request }) => {
    await secondFactors.removeTotp(await person(principal), request);
    return { status: 204, body: undefined };
  };

  const regenerateRecoveryCodes: Handler<'regenerateRecoveryCodes'> = async ({ principal, request }) => ({
    status: 201,
    body: { recovery_codes: await secondFactors.regenerateRecoveryCodes(await person(principal), request) },
    headers: NO_STORE,
  });

  const stepUpSession: Handler<'stepUpSession'> = async ({ principal, body, request }) => {
    // The contract lets exactly one proof through.
    const answer =
      body.totp_code !== undefined
        ? { totp_code: body.totp_code }
        : body.recovery_code !== undefined
          ? { recovery_code: body.recovery_code }
          : body.passkey !== undefined
            ? { passkey: body.passkey }
            : { password: body.password! };
    return { status: 200, body: await stepUp.prove(await person(principal), answer, request), headers: NO_STORE };
  };

  const startPasskeyStepUp: Handler<'startPasskeyStepUp'> = async ({ principal, request }) => ({
    status: 201,
    body: await stepUp.startWithPasskey(await person(principal), request),
    headers: NO_STORE,
  });

  // A user without any factor is answered 204 as well: the state asked for is reached.
  const resetUserSecondFactors: Handler<'resetUserSecondFactors'> = async ({ path, principal, request }) => {
    await secondFactorResets.reset(requireCaller(principal), path.id, request);
    return { status: 204, body: undefined };
  };

  return { resetUserSecondFactors, stepUpSession, startPasskeyStepUp, getMySecondFactors, startTotpEnrolment, confirmTotpEnrolment, removeTotp, regenerateRecoveryCodes };
}
