// Handlers of the signed-in user: who am I, changing my settings, and changing my password.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import type { Permission } from '../permissions.js';
import { refused } from '../../errors.js';
import { presentSession } from './presenter.js';
import { presentUser } from '../../users/presenter.js';
import { signedInUser } from '../caller.js';

export function meHandlers({ sessions, passwordChange, users }: Pick<PlatformServices, 'sessions' | 'passwordChange' | 'users'>) {
  /** Who the signed-in person is, as GET /me (and PATCH /me) answer. */
  async function present(me: ReturnType<typeof signedInUser>) {
    const [user, session, language] = await Promise.all([users.find(me.userId), sessions.find(me.sessionId), users.languageOf(me.userId)]);
    // Signed out or revoked between authentication and here.
    if (!user || !session) throw refused('invalid_token', 'The access token is unknown, expired or revoked.');
    return {
      status: 200 as const,
      body: {
        user: presentUser(user),
        permissions: ([...me.permissions] as Permission[]).sort(),
        language,
        session: presentSession(session, me.sessionId),
      },
    };
  }

  const getMe: Handler<'getMe'> = async ({ principal }) => present(signedInUser(principal));

  const updateMe: Handler<'updateMe'> = async ({ principal, body, request }) => {
    const me = signedInUser(principal);
    if (body.language !== undefined) await users.setOwnLanguage(me, body.language, request);
    return present(me);
  };

  const changePassword: Handler<'changePassword'> = async ({ principal, body, request }) => {
    const me = signedInUser(principal);
    await passwordChange.change(me.userId, me.sessionId, body.current_password, body.new_password, request);
    return { status: 204, body: undefined };
  };

  return { getMe, updateMe, changePassword };
}
