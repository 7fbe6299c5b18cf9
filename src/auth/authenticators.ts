// Checks presented credentials. API keys and sessions do not exist yet in this build (issues 3
// and 4), so no credential can be valid: every one is refused with the right 401.
import type { Authenticators } from './principal.js';
import { unauthorized } from '../http/problem.js';

export function createAuthenticators(): Authenticators {
  return {
    apiKey: async () => {
      throw unauthorized('invalid_api_key', 'The API key is unknown or revoked.', true);
    },
    bearer: async () => {
      throw unauthorized('invalid_token', 'The access token is unknown, expired or revoked.', true);
    },
  };
}
