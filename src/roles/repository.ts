// Queries on roles, their permissions and who holds them. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, RolesTable } from '../db/schema.js';
import { uniqueNameKey } from '../text/normalize.js';
import { catalogueDigest } from '../revisions/revisions.js';
import { changedAt } from '../db/versions.js';

/** A role's revision: its row's version and the permission catalogue's digest. Every change of a role, its permissions included, moves it (updateRoleFields). */
export const roleRevision = (role: { version: number }) => `${role.version}/${catalogueDigest}`;

export type RoleRow = Selectable<RolesTable> & { permissions: string[] };

/** The key a role is looked up by from a name as someone typed it (`--role Admin`, a grant). */
export const roleNameKey = (name: string) => uniqueNameKey(name.trim());

function selectRoles(db: Kysely<Database>) {
  return db
    .selectFrom('roles as r')
    .selectAll('r')
    .select(sql<string[]>`array(select rp.permission from role_permissions rp where rp.role_id = r.id order by rp.permission)`.as('permissions'));
}

export function listRoles(db: Kysely<Database>): Promise<RoleRow[]> {
  return selectRoles(db).orderBy('r.name_key').execute();
}

export function findRoleById(db: Kysely<Database>, id: string): Promise<RoleRow | undefined> {
  return selectRoles(db).where('r.id', '=', id).executeTakeFirst();
}

/**
 * Locks the role until the transaction ends, then reads it with its permissions in a second
 * statement. One `SELECT ... FOR UPDATE` would not do: after waiting for a concurrent change of the
 * role, it returns the new row but its permissions as they were when the statement began (READ
 * COMMITTED), so the caller would be judged on permissions the role no longer has.
 */
export async function lockRole(db: Kysely<Database>, id: string): Promise<RoleRow | undefined> {
  const locked = await db.selectFrom('roles').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
  return locked && findRoleById(db, id);
}

/** The ids of the people holding the role (whatever their status), in id order. */
export async function holdersOfRole(db: Kysely<Database>, roleId: string): Promise<string[]> {
  const rows = await db.selectFrom('user_roles').select('user_id').where('role_id', '=', roleId).orderBy('user_id').execute();
  return rows.map((r) => r.user_id);
}

/** A role and the people holding it, each with the roles they hold, as lockRoleWithHolders locked them. */
export interface RoleWithHolders {
  role: RoleRow;
  holders: { id: string; roles: RoleRow[] }[];
}

/**
 * Locks a role for a change that acts on the people holding it (docs/AUTH.md, the lock order: the
 * people, their roles, then the role): the holders' rows FOR SHARE in id order (their roles can
 * change only under their row's FOR UPDATE lock), then the roles they hold and the role itself in
 * id order, the role FOR UPDATE (nobody is granted it, or loses it, until the transaction ends:
 * both lock it FOR SHARE) and the others FOR SHARE (their permissions stay). Read again once locked.
 * Undefined for an unknown role; 'moved' when someone was granted the role between the first read
 * of its holders and the role's lock: that person is not locked, so the caller starts again.
 */
export async function lockRoleWithHolders(db: Kysely<Database>, roleId: string): Promise<RoleWithHolders | 'moved' | undefined> {
  const holders = await holdersOfRole(db, roleId);
  if (holders.length > 0) await db.selectFrom('users').select('id').where('id', 'in', holders).orderBy('id').forShare().execute();
  const heldIds = holders.length === 0 ? [] : (await db.selectFrom('user_roles').select('role_id').where('user_id', 'in', holders).execute()).map((r) => r.role_id);
  // uuid order in PostgreSQL is the order of their lower-case text (src/scim/repository.ts, lockUsers).
  const others = [...new Set(heldIds)].filter((id) => id !== roleId).sort();
  const share = async (ids: string[]) => {
    if (ids.length > 0) await db.selectFrom('roles').select('id').where('id', 'in', ids).orderBy('id').forShare().execute();
  };
  await share(others.filter((id) => id < roleId));
  const locked = await db.selectFrom('roles').select('id').where('id', '=', roleId).forUpdate().executeTakeFirst();
  await share(others.filter((id) => id > roleId));
  if (!locked) return undefined;
  const now = await holdersOfRole(db, roleId);
  const lockedHolders = new Set(holders);
  if (now.some((id) => !lockedHolders.has(id))) return 'moved';
  const role = (await findRoleById(db, roleId))!;
  if (now.length === 0) return { role, holders: [] };
  const rows = await selectRoles(db)
    .innerJoin('user_roles as ur', 'ur.role_id', 'r.id')
    .select('ur.user_id as holder_id')
    .where('ur.user_id', 'in', now)
    .execute();
  const rolesOf = new Map<string, typeof rows>();
  for (const row of rows) rolesOf.set(row.holder_id, [...(rolesOf.get(row.holder_id) ?? []), row]);
  return { role, holders: now.map((id) => ({ id, roles: rolesOf.get(id) ?? [] })) };
}

/** True when an identity provider maps a group to this role: it is granted at sign-in to whoever the directory lists (src/auth/identity-providers). */
export async function isMappedByIdentityProvider(db: Kysely<Database>, roleId: string): Promise<boolean> {
  return (await db.selectFrom('identity_provider_role_mappings').select('role_id').where('role_id', '=', roleId).limit(1).executeTakeFirst()) !== undefined;
}

/**
 * The roles with these names (compared by their uniqueNameKey: case and width do not matter), locked against change (FOR SHARE, as
 * lockRolesOfUser) until the transaction ends, then read by id in a second statement (see
 * lockRole): a grant is judged on what the roles hold when it is written.
 */
export async function lockRolesByName(db: Kysely<Database>, names: readonly string[]): Promise<RoleRow[]> {
  if (names.length === 0) return [];
  const locked = await db
    .selectFrom('roles')
    .select('id')
    .where('name_key', 'in', names.map(roleNameKey))
    .forShare()
    .execute();
  if (locked.length === 0) return [];
  return selectRoles(db).where('r.id', 'in', locked.map((r) => r.id)).execute();
}

/**
 * The roles of these ids that still exist, locked FOR SHARE until the transaction ends (a role's
 * change or deletion waits), then read with their permissions: a grant judged on them writes over
 * the roles as judged.
 */
export async function lockRolesById(db: Kysely<Database>, ids: readonly string[]): Promise<RoleRow[]> {
  const locked = await lockRoleIds(db, ids);
  if (locked.length === 0) return [];
  return selectRoles(db).where('r.id', 'in', locked).execute();
}

/** The ids of these roles that still exist, locked FOR SHARE (id order) until the transaction ends. */
export async function lockRoleIds(db: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  return (await db.selectFrom('roles').select('id').where('id', 'in', ids).orderBy('id').forShare().execute()).map((r) => r.id);
}

export async function insertRole(db: Kysely<Database>, values: { name: string; description: string; requiresSecondFactor: boolean; now: Date }): Promise<string> {
  const row = await db
    .insertInto('roles')
    .values({ name: values.name, name_key: uniqueNameKey(values.name), description: values.description, requires_second_factor: values.requiresSecondFactor, created_at: values.now, updated_at: values.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/**
 * Writes a role's fields as a change of the role: its version moves even when nothing in the row
 * would (its permissions, kept in role_permissions, are part of it, and `now` may equal the last
 * write's when the clock has not moved), so its tag never stays on a stale view (docs/SAFE-WRITES.md).
 */
export async function updateRoleFields(db: Kysely<Database>, id: string, fields: { name?: string; description?: string; requires_second_factor?: boolean; now: Date }): Promise<void> {
  const { now, ...rest } = fields;
  const key = rest.name === undefined ? {} : { name_key: uniqueNameKey(rest.name) };
  await db
    .updateTable('roles')
    .set({ ...rest, ...key, ...changedAt(now) })
    .where('id', '=', id)
    .execute();
}

export async function replaceRolePermissions(db: Kysely<Database>, roleId: string, permissions: readonly string[]): Promise<void> {
  await db.deleteFrom('role_permissions').where('role_id', '=', roleId).execute();
  if (permissions.length > 0) {
    await db.insertInto('role_permissions').values(permissions.map((permission) => ({ role_id: roleId, permission }))).execute();
  }
}

export async function deleteRole(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('roles').where('id', '=', id).execute();
}

/** Replaces the set of roles a user holds. */
export async function setUserRoles(db: Kysely<Database>, userId: string, roleIds: readonly string[]): Promise<void> {
  await db.deleteFrom('user_roles').where('user_id', '=', userId).execute();
  if (roleIds.length > 0) {
    await db.insertInto('user_roles').values(roleIds.map((role_id) => ({ user_id: userId, role_id }))).execute();
  }
}

/**
 * The roles a user holds, locked against change (FOR SHARE: a role's changes and deletion wait) until
 * the transaction ends, then read with their permissions in a second statement (see lockRole), so a
 * check on what the user holds stays true until the change it allows is written. The user's row
 * must be locked already (FOR UPDATE to change the user's roles, FOR SHARE at least to judge them):
 * it guards the user's set of roles.
 */
export async function lockRolesOfUser(db: Kysely<Database>, userId: string): Promise<RoleRow[]> {
  await db
    .selectFrom('roles as r')
    .innerJoin('user_roles as ur', 'ur.role_id', 'r.id')
    .select('r.id')
    .where('ur.user_id', '=', userId)
    .forShare('r')
    .execute();
  return rolesOfUser(db, userId);
}

/** The roles a user holds, with their permissions: one query. */
export function rolesOfUser(db: Kysely<Database>, userId: string): Promise<RoleRow[]> {
  return selectRoles(db)
    .where((eb) => eb.exists(eb.selectFrom('user_roles as ur').select('ur.role_id').whereRef('ur.role_id', '=', 'r.id').where('ur.user_id', '=', userId)))
    .execute();
}
