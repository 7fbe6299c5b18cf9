// Small facts about the authenticated caller that several handlers need.
import type { Principal } from './principal.js';
import { forbidden, internal } from '../errors.js';

/** The principal of a secured operation (the router authenticated it already). */
export function requireCaller(principal: Principal | null): Principal {
  if (!principal) throw internal('A secured operation ran without a caller.');
  return principal;
}

/** The signed-in user behind the request; API-key-only operations never reach this. */
export function requireUser(principal: Principal | null): Extract<Principal, { kind: 'user' }> {
  const caller = requireCaller(principal);
  if (caller.kind !== 'user') throw forbidden('user_required', 'Only a signed-in user may do this, not an API key.');
  return caller;
}
