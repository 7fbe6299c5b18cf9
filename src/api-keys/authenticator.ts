// Resolves an x-api-key to its principal. API keys do not exist yet in this build (issue 4), so
// no key can be valid: every one is refused with 401 invalid_api_key.
import type { Principal } from '../auth/principal.js';
import type { Dependencies } from '../dependencies.js';
import { unauthorized } from '../http/problem.js';

export function apiKeyAuthenticator(_deps: Dependencies) {
  return async (_secret: string, _request: { ip: string }): Promise<Principal> => {
    throw unauthorized('invalid_api_key', 'The API key is unknown or revoked.', true);
  };
}
