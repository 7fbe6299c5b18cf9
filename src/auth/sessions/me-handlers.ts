// Handlers of the signed-in user: who am I, and changing my password.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import type { Permission } from '../permissions.js';
import { refused } from '../../errors.js';
import { presentSession } from './presenter.js';
import { presentUser } from '../../users/presenter.js';
import { signedInUser } from '../caller.js';

export function meHandlers({ sessions, passwordChange, users }: Pick<PlatformServices, 'sessions' | 'passwordChange' | 'users'>) {

  const getMe: Handler<'getMe'> = async ({ principal }) => {
    const me = signedInUser(principal);
    const [user, session] = await Promise.all([users.find(me.userId), sessions.find(me.sessionId)]);
    // Signed out or revoked between authentication and here.
    if (!user || !session) throw refused('invalid_token', 'The access token is unknown, expired or revoked.');
    return {
      status: 200,
      body: {
        user: presentUser(user),
        permissions: ([...me.permissions] as Permission[]).sort(),
        session: presentSession(session, me.sessionId),
      },
    };
  };

  const changePassword: Handler<'changePassword'> = async ({ principal, body, request }) => {
    const me = signedInUser(principal);
    await passwordChange.change(me.userId, me.sessionId, body.current_password, body.new_password, request);
    return { status: 204, body: undefined };
  };

  return { getMe, changePassword };
}
