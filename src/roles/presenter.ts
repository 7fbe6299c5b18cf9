// The public shape of a role.
import type { components } from '../../generated/openapi.js';
import type { RoleRow } from './repository.js';
import { permissionsOfRole } from './permissions.js';

export type RoleResource = components['schemas']['Role'];

export function presentRole(row: RoleRow): RoleResource {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    permissions: permissionsOfRole(row),
    requires_second_factor: row.requires_second_factor,
    built_in: row.built_in,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
