// Handlers of signing in and of session management: one's own sessions, and (with
// sessions.manage) any user's.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import { notFound } from '../../errors.js';
import { presentSession } from './presenter.js';
import { requireCaller, signedInUser } from '../caller.js';
import { NO_STORE_TOKENS } from '../../http/no-store.js';

const sessionNotFound = () => notFound('session_not_found', 'No session with this id.');
const userNotFound = () => notFound('not_found', 'No user has this id.');

export function sessionHandlers({ signIn: signingIn, sessions }: Pick<PlatformServices, 'signIn' | 'sessions'>) {

  const signIn: Handler<'signIn'> = async ({ body, request }) => {
    const outcome = await signingIn.withPassword(body.session.email, body.session.password, request);
    if ('challenge' in outcome) return { status: 202, body: { second_factor: outcome.challenge }, headers: NO_STORE_TOKENS };
    return { status: 201, body: outcome.tokens, headers: NO_STORE_TOKENS };
  };

  const signInSecondFactor: Handler<'signInSecondFactor'> = async ({ body, request }) => {
    // The contract lets exactly one factor through beside the challenge token.
    const answer = body.totp_code !== undefined ? { totp_code: body.totp_code } : body.passkey !== undefined ? { passkey: body.passkey } : { recovery_code: body.recovery_code! };
    const set = await signingIn.withSecondFactor(body.challenge_token, answer, request);
    return { status: 201, body: set, headers: NO_STORE_TOKENS };
  };

  const listSessions: Handler<'listSessions'> = async ({ principal }) => {
    const me = signedInUser(principal);
    const rows = await sessions.listOwn(me.userId);
    return { status: 200, body: { data: rows.map((row) => presentSession(row, me.sessionId)) } };
  };

  const signOut: Handler<'signOut'> = async ({ principal, request }) => {
    const me = signedInUser(principal);
    await sessions.signOut(me.userId, me.sessionId, request);
    return { status: 204, body: undefined };
  };

  const revokeSession: Handler<'revokeSession'> = async ({ principal, path, request }) => {
    const me = signedInUser(principal);
    // Only the caller's own sessions: another user's id is indistinguishable from an unknown one.
    const actor = { type: 'user' as const, userId: me.userId, sessionId: me.sessionId };
    if (!(await sessions.revoke(me.userId, path.id, request, 'revoked_by_user', actor))) throw sessionNotFound();
    return { status: 204, body: undefined };
  };

  const listUserSessions: Handler<'listUserSessions'> = async ({ principal, path }) => {
    const rows = await sessions.listOfUser(path.id);
    if (!rows) throw userNotFound();
    const current = principal?.kind === 'user' ? principal.sessionId : null;
    return { status: 200, body: { data: rows.map((row) => presentSession(row, current)) } };
  };

  const revokeUserSessions: Handler<'revokeUserSessions'> = async ({ path, principal, request }) => {
    // Revoking when there is nothing to revoke is fine (204); naming nobody is not.
    if (!(await sessions.revokeAsManager(requireCaller(principal), path.id, undefined, request)) && !(await sessions.userExists(path.id))) throw userNotFound();
    return { status: 204, body: undefined };
  };

  const revokeUserSession: Handler<'revokeUserSession'> = async ({ path, principal, request }) => {
    if (!(await sessions.revokeAsManager(requireCaller(principal), path.id, path.session_id, request))) throw sessionNotFound();
    return { status: 204, body: undefined };
  };

  return { signIn, signInSecondFactor, listSessions, signOut, revokeSession, listUserSessions, revokeUserSessions, revokeUserSession };
}
