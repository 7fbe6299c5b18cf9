// A person as a SCIM User (RFC 7643, 4.1): exactly the contract's ScimUser.
import type { components } from '../../generated/openapi.js';
import type { ScimUserRow } from './repository.js';

export type ScimUser = components['schemas']['ScimUser'];

export const USER_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:User';

export function presentScimUser(row: ScimUserRow): ScimUser {
  const formatted = `${row.first_name} ${row.last_name}`.trim();
  return {
    schemas: [USER_SCHEMA],
    id: row.id,
    ...(row.external_id !== null ? { externalId: row.external_id } : {}),
    userName: row.email,
    name: { givenName: row.first_name, familyName: row.last_name, formatted },
    displayName: formatted,
    active: row.status === 'active',
    emails: [{ value: row.email, type: 'work', primary: true }],
    groups: row.groups.map((g) => ({ value: g.value, display: g.display, $ref: `/scim/v2/Groups/${g.value}` })),
    meta: { resourceType: 'User', created: row.created_at, lastModified: row.updated_at, location: `/scim/v2/Users/${row.id}`, version: `W/"${row.version}"` },
  };
}
