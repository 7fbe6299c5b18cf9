// One permission model for people and keys: what a set of roles grants, and the rule that nobody
// hands out (to a role, a user or an API key) a permission they do not hold themselves.
import { ADMIN_ROLE, PERMISSIONS, type Permission } from '../auth/permissions.js';
import { ProblemError } from '../http/problem.js';
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

/** Throws 403 naming the first permission in `wanted` that the caller does not hold. */
export function assertCallerHolds(callerPermissions: ReadonlySet<string>, wanted: Iterable<string>, what: string): void {
  for (const permission of wanted) {
    if (!callerPermissions.has(permission)) {
      throw new ProblemError(403, 'permission_denied', `You cannot grant ${what} holding ${permission}, a permission you do not have.`, {
        required_permission: permission as Permission,
      });
    }
  }
}
