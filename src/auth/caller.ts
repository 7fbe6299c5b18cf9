// Narrowing the caller: the one home of "who may reach this code". The contract's security
// requirements let only the right kind of caller reach an operation; these say so to the compiler
// and treat a caller of the wrong kind as our bug (or, for a missing user, as unauthenticated).
import type { Principal } from './principal.js';
import type { Authority } from './authority.js';
import { fieldError, internal, unauthenticated } from '../errors.js';

/** The principal of a secured operation (the router authenticated it already). */
export function requireCaller(principal: Principal | null): Principal {
  if (!principal) throw internal('A secured operation ran without a caller.');
  return principal;
}

/** The signed-in user behind a bearer-only operation. */
export function signedInUser(principal: Principal | null): Extract<Principal, { kind: 'user' }> {
  if (principal?.kind !== 'user') throw unauthenticated('unauthenticated', 'This operation needs a signed-in user.');
  return principal;
}

/** Signed-in users and the operator only: the contract admits no API key to these operations. */
export function assertNotApiKey(authority: Authority): void {
  if (authority.kind === 'api_key') throw internal('An API key reached an operation for signed-in users only.');
}

/**
 * A filter naming a person, with `me` for the signed-in caller (`assignee_id=me`,
 * `attendee_id=me`): `me` resolved to the caller's user id, any other value lower-cased. An API
 * key acts for an application, which is nobody: `me` from a key is `400 validation_failed` with
 * `error_code: me_without_person` on the parameter (guessing, say its creator, would let a key
 * read as a person).
 */
export function personFilter(caller: Principal, parameter: string, value: string | undefined): string | undefined {
  const id = value?.toLowerCase();
  if (id !== 'me') return id;
  if (caller.kind !== 'user') throw fieldError('query', parameter, '`me` is the signed-in person, and an API key is nobody: name a user id', 'me_without_person');
  return caller.userId;
}
