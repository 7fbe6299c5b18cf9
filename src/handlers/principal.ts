// Handlers of bearer-only operations need the signed-in user behind the principal.
import type { Principal } from '../auth/principal.js';
import { unauthenticated } from '../errors.js';

export function signedInUser(principal: Principal | null): Extract<Principal, { kind: 'user' }> {
  if (principal?.kind !== 'user') throw unauthenticated('unauthenticated', 'This operation needs a signed-in user.');
  return principal;
}
