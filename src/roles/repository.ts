// Queries on roles, their permissions and who holds them. Functions take the database or a transaction.
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, RolesTable } from '../db/schema.js';

export type RoleRow = Selectable<RolesTable> & { permissions: string[] };

function selectRoles(db: Kysely<Database>) {
  return db
    .selectFrom('roles as r')
    .selectAll('r')
    .select(sql<string[]>`array(select rp.permission from role_permissions rp where rp.role_id = r.id order by rp.permission)`.as('permissions'));
}

export function listRoles(db: Kysely<Database>): Promise<RoleRow[]> {
  return selectRoles(db).orderBy(sql`lower(r.name)`).execute();
}

export function findRoleById(db: Kysely<Database>, id: string, forUpdate = false): Promise<RoleRow | undefined> {
  const query = selectRoles(db).where('r.id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The roles with these names (case does not matter). */
export function findRolesByName(db: Kysely<Database>, names: readonly string[]): Promise<RoleRow[]> {
  if (names.length === 0) return Promise.resolve([]);
  return selectRoles(db)
    .where(sql<string>`lower(r.name)`, 'in', names.map((n) => n.toLowerCase()))
    .execute();
}

export async function insertRole(db: Kysely<Database>, values: { name: string; description: string; now: Date }): Promise<string> {
  const row = await db
    .insertInto('roles')
    .values({ name: values.name, description: values.description, created_at: values.now, updated_at: values.now })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function updateRoleFields(db: Kysely<Database>, id: string, fields: { name?: string; description?: string; now: Date }): Promise<void> {
  const { now, ...rest } = fields;
  await db.updateTable('roles').set({ ...rest, updated_at: now }).where('id', '=', id).execute();
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

/** The roles a user holds, with their permissions: one query. */
export function rolesOfUser(db: Kysely<Database>, userId: string): Promise<RoleRow[]> {
  return selectRoles(db)
    .where((eb) => eb.exists(eb.selectFrom('user_roles as ur').select('ur.role_id').whereRef('ur.role_id', '=', 'r.id').where('ur.user_id', '=', userId)))
    .execute();
}
