// Handlers of refreshing a login token set (POST /tokens and its French name POST /jetons).
// The operation is marked `x-authenticated-by: handler`: the access token may have expired, so
// the service, not the middleware, checks it belongs to the refresh token's session.
import type { Handler } from '../../http/handler-types.js';
import type { PlatformServices } from '../../services.js';
import { bearerToken } from '../bearer.js';
import { refused, unauthenticated } from '../../errors.js';
import { NO_STORE_TOKENS } from '../../http/no-store.js';


export function tokenHandlers({ tokenRefresh }: Pick<PlatformServices, 'tokenRefresh'>) {
  const refreshTokens: Handler<'refreshTokens'> = async ({ body, headers, request }) => {
    const authorization = typeof headers.authorization === 'string' ? headers.authorization : undefined;
    const accessToken = bearerToken(authorization);
    if (!accessToken) {
      const detail = 'The Authorization header must be "Bearer <access_token>".';
      throw authorization === undefined ? unauthenticated('invalid_token', detail) : refused('invalid_token', detail);
    }
    const set = await tokenRefresh.refresh(accessToken, body.refresh_token, request);
    return { status: 201, body: set, headers: NO_STORE_TOKENS };
  };
  return { refreshTokens };
}
