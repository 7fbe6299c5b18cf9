// What signing in and password changes need from the users table, and creating a user with a
// password (the command line and the first administrator).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { hashPassword } from '../auth/secrets/passwords.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { COMMAND_LINE, actorOf } from '../audit/context.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { EMAIL_UNIQUE_INDEX, cleanUserText, emailKey } from './names.js';
import { roleNameKey } from '../roles/repository.js';

type Db = Kysely<Database> | Transaction<Database>;

export async function findUserByEmail(db: Db, email: string) {
  return db.selectFrom('users').select(['id', 'status', 'password_hash']).where('email_key', '=', emailKey(email)).executeTakeFirst();
}

/** The e-mail (the throttle's key) and password hash of a user. */
export async function findCredentials(db: Db, userId: string): Promise<{ email: string; password_hash: string | null } | undefined> {
  return db.selectFrom('users').select(['email', 'password_hash']).where('id', '=', userId).executeTakeFirst();
}

/** Stores a new hash (a rehash keeps everything else; `chosenByUser` also lifts must_change_password). */
export async function setPasswordHash(db: Db, userId: string, passwordHash: string, now: Date, options: { chosenByUser?: boolean } = {}): Promise<void> {
  await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now, ...(options.chosenByUser ? { must_change_password: false } : {}) })
    .where('id', '=', userId)
    .execute();
}

/**
 * Stores a new hash of the same password (a rehash with today's parameters) only if the row still
 * holds `verified`, the hash the password was just checked against; false when it changed since
 * (a reset, a change, another sign-in's rehash), and then nothing is written.
 */
export async function rehashPassword(db: Db, userId: string, verified: string, passwordHash: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('id', '=', userId)
    .where('password_hash', '=', verified)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** The person's password hash as stored now (null: no password, or no such person). */
export async function storedPasswordHash(db: Db, userId: string): Promise<string | null> {
  const row = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst();
  return row?.password_hash ?? null;
}

export class DuplicateEmailError extends Error {
  override name = 'DuplicateEmailError';
}

export interface NewUser {
  email: string;
  firstName: string;
  lastName: string;
  password: string;
  /** Role names to grant; they must exist. */
  roles?: string[];
  /** The password was chosen by someone else: its owner must replace it at first sign-in. */
  mustChangePassword?: boolean;
}

/** Creates an active user with a hashed password (the caller checks the password policy), recorded as the command line's act. */
export async function createUserWithPassword(db: Kysely<Database>, user: NewUser): Promise<{ id: string }> {
  const { email, first_name: firstName, last_name: lastName } = cleanUserText({ email: user.email, first_name: user.firstName, last_name: user.lastName }, 'options');
  const passwordHash = await hashPassword(user.password);
  const duplicate = () => new DuplicateEmailError(`A user with the e-mail ${email} already exists.`);
  const created = await db.transaction().execute(async (trx) => {
    if (await findUserByEmail(trx, email)) throw duplicate();
    const created = await trx
      .insertInto('users')
      .values({ email, email_key: emailKey(email), first_name: firstName, last_name: lastName, password_hash: passwordHash, must_change_password: user.mustChangePassword ?? false })
      .returning('id')
      .executeTakeFirstOrThrow();
    const roles: string[] = [];
    for (const name of user.roles ?? []) {
      const role = await trx.selectFrom('roles').select(['id', 'name']).where('name_key', '=', roleNameKey(name)).executeTakeFirst();
      if (!role) throw new Error(`No role named ${name}.`);
      await trx.insertInto('user_roles').values({ user_id: created.id, role_id: role.id }).execute();
      roles.push(role.name);
    }
    await recordAuditEvent(trx, {
      type: 'user_created',
      at: new Date(),
      context: { actor: actorOf({ kind: 'operator' }), ...COMMAND_LINE },
      target: { type: 'user', id: created.id, label: `${firstName} ${lastName}` },
      userId: created.id,
      details: { password_set: true },
      changes: { before: null, after: { email, first_name: firstName, last_name: lastName, status: 'active', roles: roles.sort() } },
    });
    return created;
  }).catch((err: unknown) => {
    // A concurrent creation of the same address passed the check above: the index decides.
    throw isUniqueViolation(err, EMAIL_UNIQUE_INDEX) ? duplicate() : err;
  });
  return created;
}
