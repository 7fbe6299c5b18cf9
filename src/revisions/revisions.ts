// What each resource's revision is made of (docs/SAFE-WRITES.md): the versions kept with every row
// its representation is read from, so that the revision, and the entity tag made from it, changes
// whenever the representation does, without producing a body. One home for every formula; the
// repositories select these expressions beside the rows they read.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { PERMISSIONS } from '../auth/permissions.js';

/**
 * The permission catalogue, which is code: a release that adds or drops a permission changes what a
 * role shows (the admin role shows every permission, the others their known ones), with no write
 * to any row, so it is part of a role's revision.
 */
const catalogue = createHash('sha256').update(PERMISSIONS.join('\n')).digest('base64url').slice(0, 8);

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
 * An API key (the api_keys row `k`, its creator left-joined as `c`): its version (a use recorded
 * bumps it too, as `last_used_at` is shown), and its creator's revision, for the key shows its
 * creator and what the creator's roles still let it do (`effective_permissions`).
 */
export const apiKeyRevision = sql<string>`k.version::text || '/' || coalesce(${userRevision('c')}, '')`;

/** A role: its row's version and the catalogue. Every change of a role, its permissions included, moves it (roles/repository.ts, updateRoleFields). */
export const roleRevision = (role: { version: number }) => `${role.version}/${catalogue}`;

/**
 * Who created a task or a meeting (the row aliased `alias`): a user creator's version, or an API
 * key creator's name, the only thing of the key they show (the key's version moves with every use
 * recorded, which would move these tags for nothing). Subqueries on the row alone, so the
 * expression fits any statement that reads the row.
 */
const creatorRevision = (alias: 't' | 'm') =>
  sql<string>`coalesce(
    (select u.version::text from users u where u.id = ${sql.ref(`${alias}.created_by_user_id`)}),
    (select 'k:' || k.name from api_keys k where k.id = ${sql.ref(`${alias}.created_by_api_key_id`)}), '')`;

/** A task (`t`): its version, its assignee's (name and status shown), its creator's. */
export const taskRevision = sql<string>`t.version::text || '/' || coalesce((select a.version::text from users a where a.id = t.assignee_id), '')
  || '/' || ${creatorRevision('t')}`;

/** A meeting (`m`): its version, its organizer's, its creator's, and each attendee's (names and status shown). */
export const meetingRevision = sql<string>`m.version::text || '/' || coalesce((select o.version::text from users o where o.id = m.organizer_id), '')
  || '/' || ${creatorRevision('m')} || coalesce((
    select ';' || string_agg(u.id::text || '.' || u.version::text, ';' order by u.id)
    from meeting_attendees ma join users u on u.id = ma.user_id where ma.meeting_id = m.id), '')`;
