// Resolves a bearer access token to its principal. Sessions do not exist yet in this build
// (issue 3), so no token can be valid: every one is refused with 401 invalid_token.
import type { Principal } from '../auth/principal.js';
import type { Dependencies } from '../dependencies.js';
import { unauthorized } from '../http/problem.js';

export function bearerAuthenticator(_deps: Dependencies) {
  return async (_accessToken: string, _request: { ip: string }): Promise<Principal> => {
    throw unauthorized('invalid_token', 'The access token is unknown, expired or revoked.', true);
  };
}
