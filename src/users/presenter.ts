// The public shape of a user: what the contract's User schema allows, never a hash.
import type { components } from '../../generated/openapi.js';
import type { ListedUser } from './repository.js';

export type UserResource = components['schemas']['User'];

export function presentUser(user: ListedUser): UserResource {
  return {
    id: user.id,
    email: user.email,
    first_name: user.first_name,
    last_name: user.last_name,
    status: user.status,
    roles: user.roles,
    created_at: user.created_at,
    updated_at: user.updated_at,
    last_sign_in_at: user.last_sign_in_at,
    // Only a tombstone says it: every other user's shape is as it was.
    ...(user.erased_at ? { erased_at: user.erased_at } : {}),
  };
}
