// Handlers of signing in and refreshing. Not built yet: see issue 3 (sign-in, tokens, sessions).
import type { Handler } from '../contract/handler-types.js';
import { ProblemError } from '../http/problem.js';
import type { Dependencies } from '../dependencies.js';

const notYet = () =>
  Promise.reject(new ProblemError(503, 'service_unavailable', 'Signing in is not available in this build yet.'));

export function tokenHandlers(_deps: Dependencies) {
  const signIn: Handler<'signIn'> = notYet;
  const refreshTokens: Handler<'refreshTokens'> = notYet;
  return { signIn, refreshTokens, refreshTokensJetons: refreshTokens };
}
