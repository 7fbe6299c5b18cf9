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
