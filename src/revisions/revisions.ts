// What each resource's revision is made of (docs/SAFE-WRITES.md): the versions kept with every row
// its representation is read from, so that the revision, and the entity tag made from it, changes
// whenever the representation does, without producing a body. One home for every formula; the
// repositories select these expressions beside the rows they read.
import { sql } from 'kysely';

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

/** A role: its row's version. Every change of a role, its permissions included, moves it (roles/repository.ts, updateRoleFields). */
export const roleRevision = (role: { version: number }) => String(role.version);

/**
 * The label of who created a task or a meeting (users `cu`, api_keys `ck`): a user creator's
 * version, or an API key creator's name, the only thing of the key they show (the key's version
 * moves with every use recorded, which would move these tags for nothing).
 */
const creatorRevision = sql<string>`coalesce(cu.version::text, 'k:' || ck.name, '')`;

/** A task (`t`, its assignee `a`, its creator `cu` or `ck`): its version, its assignee's (name and status shown), its creator's. */
export const taskRevision = sql<string>`t.version::text || '/' || coalesce(a.version::text, '') || '/' || ${creatorRevision}`;

/** A meeting (`m`, its organizer `o`, its creator `cu` or `ck`): its version, its organizer's, its creator's, and each attendee's (names and status shown). */
export const meetingRevision = sql<string>`m.version::text || '/' || o.version::text || '/' || ${creatorRevision} || coalesce((
    select ';' || string_agg(u.id::text || '.' || u.version::text, ';' order by u.id)
    from meeting_attendees ma join users u on u.id = ma.user_id where ma.meeting_id = m.id), '')`;
