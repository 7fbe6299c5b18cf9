// One permission model for people and keys: what a set of roles grants. (Who may change it is
// src/auth/authority.ts.)
import { ADMIN_ROLE, PERMISSIONS, type Permission } from '../auth/permissions.js';
import type { RoleRow } from './repository.js';

/** The permissions a role grants. The built-in admin role grants the whole catalogue, present and future. */
export function permissionsOfRole(role: Pick<RoleRow, 'built_in' | 'name' | 'permissions'>): Permission[] {
  if (role.built_in && role.name === ADMIN_ROLE) return [...PERMISSIONS];
  return role.permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p));
}

/** The union of what the roles grant. */
export function permissionsOfRoles(roles: readonly Pick<RoleRow, 'built_in' | 'name' | 'permissions'>[]): Set<Permission> {
  return new Set(roles.flatMap(permissionsOfRole));
}

/** True when the roles include the built-in admin role. */
export function includesAdmin(roles: readonly Pick<RoleRow, 'built_in' | 'name'>[]): boolean {
  return roles.some((r) => r.built_in && r.name === ADMIN_ROLE);
}
