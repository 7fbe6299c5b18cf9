// Queries on the users table. Functions take the database or a transaction.
import type { Kysely, Selectable } from 'kysely';
import type { Database, UsersTable } from '../db/schema.js';

export type UserRow = Selectable<UsersTable>;

export async function listUsersPage(db: Kysely<Database>, limit: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('id').limit(limit).execute();
}
