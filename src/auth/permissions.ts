// The permission catalogue. Its source is the contract's Permission enum, so the spec, the
// generated types and the server can never list different permissions.
import type { components } from '../../generated/openapi.js';
import { loadSpec } from '../contract/spec.js';

export type Permission = components['schemas']['Permission'];

export const PERMISSIONS: readonly Permission[] = Object.freeze(loadSpec().components.schemas.Permission.enum as Permission[]);

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The built-in role that holds every permission, including ones added to the catalogue later. */
export const ADMIN_ROLE = 'admin';
