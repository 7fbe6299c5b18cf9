// The permission catalogue. Its source is the contract's Permission enum, so the spec, the
// generated types and the server can never list different permissions.
import type { components } from '../../generated/openapi.js';
import { readContract } from '../contract/spec.js';

export type Permission = components['schemas']['Permission'];

export const PERMISSIONS: readonly Permission[] = Object.freeze(readContract().components.schemas.Permission.enum as Permission[]);

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/**
 * The name the built-in admin role is created with (migration 20261121T1210_roles). Only a name:
 * the role may be renamed, and is known by ADMIN_ROLE_ID below.
 */
export const ADMIN_ROLE = 'admin';

/**
 * The admin role's id: what makes a role the admin role, in the code and in SQL (its name is only
 * shown). Fixed by migration 20261208T1000_admin_role_id, after which the database lets no other
 * role be built in and this one not be otherwise.
 */
export const ADMIN_ROLE_ID = '00000000-0000-4000-8000-000000000001';
