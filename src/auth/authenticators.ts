// The two ways in: an API key (x-api-key) or a session's access token (Authorization: Bearer).
import type { Authenticators } from './principal.js';
import type { Dependencies } from '../dependencies.js';
import { apiKeyAuthenticator } from '../api-keys/authenticator.js';
import { bearerAuthenticator } from '../sessions/authenticator.js';

export function createAuthenticators(deps: Dependencies): Authenticators {
  return { apiKey: apiKeyAuthenticator(deps), bearer: bearerAuthenticator(deps) };
}
