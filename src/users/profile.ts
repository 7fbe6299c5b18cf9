// A user and the names of its roles, for GET /me.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { UserRow } from './repository.js';

export async function findUserWithRoles(db: Kysely<Database>, userId: string): Promise<{ user: UserRow; roles: string[] } | undefined> {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user) return undefined;
  const roles = await db
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select('roles.name')
    .where('user_roles.user_id', '=', userId)
    .orderBy('roles.name')
    .execute();
  return { user, roles: roles.map((r) => r.name) };
}
