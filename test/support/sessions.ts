// Helpers for tests that sign people in: users with passwords and roles, and signing in.
import request from 'supertest';
import type { Kysely } from 'kysely';
type App = Parameters<typeof request>[0];
import type { Database } from '../../src/db/schema.js';
import { createUserWithPassword } from '../../src/users/credentials.js';
import { roleRow } from './rows.js';

let counter = 0;

/** A new active user with a password; `permissions` are granted through a new role of its own. */
export async function createUser(
  db: Kysely<Database>,
  options: { password?: string; roles?: string[]; permissions?: string[]; email?: string } = {},
) {
  counter += 1;
  const email = options.email ?? `person${counter}-${Date.now()}@example.com`;
  const password = options.password ?? `a long test password ${counter}`;
  const { id } = await createUserWithPassword(db, { email, firstName: 'Test', lastName: `Person ${counter}`, password, roles: options.roles ?? [] });
  if (options.permissions?.length) {
    const role = await db.insertInto('roles').values(roleRow({ name: `role-${id}` })).returning('id').executeTakeFirstOrThrow();
    await db.insertInto('role_permissions').values(options.permissions.map((permission) => ({ role_id: role.id, permission }))).execute();
    await db.insertInto('user_roles').values({ user_id: id, role_id: role.id }).execute();
  }
  return { id, email, password };
}

export interface TokenSetBody {
  token_type: string;
  expires_in: number;
  access_token: string;
  refresh_token: string;
}

export async function signIn(app: App, email: string, password: string, userAgent = 'vitest'): Promise<TokenSetBody> {
  const res = await request(app).post('/sessions').set('user-agent', userAgent).send({ session: { email, password } });
  if (res.status !== 201) throw new Error(`sign-in answered ${res.status}: ${res.text}`);
  return res.body as TokenSetBody;
}

export function refresh(app: App, set: { access_token: string; refresh_token: string }, path = '/tokens') {
  return request(app).post(path).set('authorization', `Bearer ${set.access_token}`).send({ refresh_token: set.refresh_token });
}
