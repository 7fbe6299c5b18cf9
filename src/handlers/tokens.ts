// Handlers of refreshing a login token set (POST /tokens and its French name POST /jetons).
// The operation is marked `x-authenticated-by: handler`: the access token may have expired, so
// the service, not the middleware, checks it belongs to the refresh token's session.
import type { Handler } from '../contract/handler-types.js';
import type { Dependencies } from '../dependencies.js';
import { bearerToken } from '../http/authenticate.js';
import { unauthorized } from '../http/problem.js';
import { sessionService } from '../sessions/service.js';

export const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

export function tokenHandlers(deps: Dependencies) {
  const sessions = sessionService(deps);
  const refreshTokens: Handler<'refreshTokens'> = async ({ body, headers, request }) => {
    const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
    const accessToken = bearerToken(authorization);
    if (!accessToken) throw unauthorized('invalid_token', 'The Authorization header must be "Bearer <access_token>".', authorization !== undefined);
    const set = await sessions.refresh(accessToken, body.refresh_token, request);
    return { status: 201, body: set, headers: NO_STORE };
  };
  return { refreshTokens, refreshTokensJetons: refreshTokens };
}
