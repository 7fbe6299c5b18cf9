// What the revisions of resources share (docs/SAFE-WRITES.md): a resource's revision is made of
// the versions kept with every row its representation is read from, so that it, and the entity tag
// made from it, changes whenever the representation does, without producing a body. Each
// resource's own formula lives in its repository beside the SQL it depends on (`taskRevision` in
// src/tasks/repository.ts, ...); the pieces several use are here: a user's revision (a user, and a
// key's creator), a creator's (tasks, meetings), and the permission catalogue's digest (roles).
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { PERMISSIONS } from '../auth/permissions.js';

/**
 * The permission catalogue, which is code: a release that adds or drops a permission changes what a
 * role shows (the admin role shows every permission, the others their known ones), with no write
 * to any row, so it is part of a role's revision.
 */
export const catalogueDigest = createHash('sha256').update(PERMISSIONS.join('\n')).digest('base64url').slice(0, 8);

/**
 * A user (the users row aliased `alias`): its version, and the id and version of each role it
 * holds, for the role names it shows change with the roles. Its role set changing changes the
 * list; a role renamed or deleted changes or leaves it, with no write to the user.
 */
export const userRevision = (alias: 'u' | 'c') =>
  sql<string>`${sql.ref(`${alias}.version`)}::text || coalesce((
    select ';' || string_agg(r.id::text || '.' || r.version::text, ';' order by r.id)
    from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = ${sql.ref(`${alias}.id`)}), '')`;

/**
 * Who created a task or a meeting, or owns a webhook endpoint (the row aliased `alias`): a user creator's version, or an API
 * key creator's name, the only thing of the key they show (the key's version moves with every use
 * recorded, which would move these tags for nothing). Subqueries on the row alone, so the
 * expression fits any statement that reads the row.
 */
export const creatorRevision = (alias: 't' | 'm' | 'w') =>
  sql<string>`coalesce(
    (select u.version::text from users u where u.id = ${sql.ref(`${alias}.created_by_user_id`)}),
    (select 'k:' || k.name from api_keys k where k.id = ${sql.ref(`${alias}.created_by_api_key_id`)}), '')`;
