// The public shape of a user: what the contract's User schema allows, never a hash.
import type { components } from '../../generated/openapi.js';
import type { UserRow } from './repository.js';

export type UserResource = components['schemas']['User'];

export function presentUser(row: Omit<UserRow, 'password_hash'>, roles: string[]): UserResource {
  return {
    id: row.id,
    email: row.email,
    first_name: row.first_name,
    last_name: row.last_name,
    status: row.status,
    roles,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    last_sign_in_at: row.last_sign_in_at ? row.last_sign_in_at.toISOString() : null,
  };
}
