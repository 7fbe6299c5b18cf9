// One permission model for people and keys: what a set of roles grants. (Who may change it is
// src/auth/authority.ts.)
import { ADMIN_ROLE_ID, PERMISSIONS, type Permission } from '../auth/permissions.js';
import type { RoleRow } from './repository.js';

/** The permissions a role grants. The built-in admin role grants the whole catalogue, present and future. */
export function permissionsOfRole(role: Pick<RoleRow, 'id' | 'permissions'>): Permission[] {
  if (isAdminRole(role)) return [...PERMISSIONS];
  return role.permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p));
}

/** The union of what the roles grant. */
export function permissionsOfRoles(roles: readonly Pick<RoleRow, 'id' | 'permissions'>[]): Set<Permission> {
  return new Set(roles.flatMap(permissionsOfRole));
}

/** True when the roles include the built-in admin role. */
export function includesAdmin(roles: readonly Pick<RoleRow, 'id'>[]): boolean {
  return roles.some(isAdminRole);
}

/** The built-in admin role is the one with its fixed id (src/auth/permissions.ts), whatever its name. */
export function isAdminRole(role: Pick<RoleRow, 'id'>): boolean {
  return role.id === ADMIN_ROLE_ID;
}
