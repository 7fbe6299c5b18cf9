// The first administrator: on an empty embedded database (`make run` with no DATABASE_URL), the
// service creates one with a random password. The password goes to a file only its owner can read,
// in the data directory, never to the terminal or the log (a log collector would keep it); only
// the file's path is printed. The administrator must replace the password at first sign-in. With a
// real PostgreSQL, operators use `backoffice users create` instead: nothing is created silently.
import { randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { ADMIN_ROLE_ID } from '../auth/permissions.js';
import { createUserWithPassword } from './credentials.js';

export const FIRST_ADMINISTRATOR_FILE = 'first-administrator.txt';

/** Creates the first administrator when there is no user at all; returns its e-mail and the password file, or null. */
export async function createFirstAdministrator(db: Kysely<Database>, email: string, dataDir: string): Promise<{ email: string; passwordFile: string } | null> {
  const anyone = await db.selectFrom('users').select('id').limit(1).executeTakeFirst();
  if (anyone) return null;
  const password = randomBytes(18).toString('base64url'); // 24 characters, 144 random bits
  const passwordFile = resolve(join(dataDir, FIRST_ADMINISTRATOR_FILE));
  mkdirSync(dataDir, { recursive: true });
  // Created anew with mode 0600 (a mode applies only when a file is created; the umask can only narrow it).
  rmSync(passwordFile, { force: true });
  writeFileSync(
    passwordFile,
    [
      'The first administrator of this back office:',
      `  e-mail:   ${email}`,
      `  password: ${password}`,
      'Sign in with it (the back office, or POST /sessions): you will be asked to choose your own',
      'password before anything else. Then delete this file.',
      '',
    ].join('\n'),
    { mode: 0o600, flag: 'wx' },
  );
  try {
    // The admin role by its id: whatever it is called now, and never a role that took its old name.
    const admin = await db.selectFrom('roles').select('name').where('id', '=', ADMIN_ROLE_ID).executeTakeFirstOrThrow();
    await createUserWithPassword(db, { email, firstName: 'First', lastName: 'Administrator', password, roles: [admin.name], mustChangePassword: true });
  } catch (err) {
    rmSync(passwordFile, { force: true });
    throw err;
  }
  return { email, passwordFile };
}
