// Handlers of the signed-in user: who am I, and changing my password.
import type { Handler } from '../contract/handler-types.js';
import type { Dependencies } from '../dependencies.js';
import type { Permission } from '../auth/permissions.js';
import { refused } from '../errors.js';
import { sessionService } from '../sessions/service.js';
import { presentSession } from '../sessions/presenter.js';
import { presentUser } from '../users/presenter.js';
import { findListedUser } from '../users/repository.js';
import { signedInUser } from '../auth/caller.js';

export function meHandlers(deps: Dependencies) {
  const sessions = sessionService(deps);

  const getMe: Handler<'getMe'> = async ({ principal }) => {
    const me = signedInUser(principal);
    const [user, session] = await Promise.all([findListedUser(deps.db, me.userId), sessions.findSession(me.sessionId)]);
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
    await sessions.changePassword(me.userId, me.sessionId, body.current_password, body.new_password, request);
    return { status: 204, body: undefined };
  };

  return { getMe, changePassword };
}
