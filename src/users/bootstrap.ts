// The first administrator: on an empty embedded database (`make run` with no DATABASE_URL), the
// service creates one with a random password and prints the credentials once. With a real
// PostgreSQL, operators use `backoffice users create` instead: nothing is ever created silently.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ADMIN_ROLE } from '../auth/permissions.js';
import { createUserWithPassword } from './credentials.js';

/** Creates the first administrator when there is no user at all; returns its e-mail, or null. */
export async function createFirstAdministrator(db: Kysely<Database>, email: string, print: (text: string) => void): Promise<string | null> {
  const anyone = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (anyone) return null;
  const password = randomBytes(18).toString('base64url'); // 24 characters, 144 random bits
  await createUserWithPassword(db, { email, firstName: 'First', lastName: 'Administrator', password, roles: [ADMIN_ROLE] });
  print(
    [
      '',
      '  The database had no user: a first administrator was created.',
      `    e-mail:   ${email}`,
      `    password: ${password}`,
      '  This password is shown only now. Sign in with POST /sessions and change it with PUT /me/password.',
      '',
    ].join('\n'),
  );
  return email;
}
