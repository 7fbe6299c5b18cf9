// Managing users. E-mail uniqueness is the unique index on lower(email): two racing creates both
// reach the INSERT and the loser gets 409, with nothing written.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import { ProblemError, forbidden } from '../http/problem.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { hashPassword, passwordPolicyViolation } from '../auth/passwords.js';
import { findRolesByName, setUserRoles } from '../roles/repository.js';
import { assertCallerHolds, permissionsOfRoles } from '../roles/permissions.js';
import * as users from './repository.js';
import { revokeSessions } from '../sessions/repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 200;

const notFound = () => new ProblemError(404, 'not_found', 'No user has this id.');
const emailTaken = () => new ProblemError(409, 'email_taken', 'Another user already has this e-mail address.');

export function userService(db: Kysely<Database>, clock: Clock) {
  /** The roles named, checked to exist and to grant nothing the caller lacks. */
  async function grantableRoles(trx: Kysely<Database>, caller: ReadonlySet<string>, names: readonly string[]) {
    const roles = await findRolesByName(trx, names);
    const found = new Set(roles.map((r) => r.name.toLowerCase()));
    const missing = names.find((n) => !found.has(n.toLowerCase()));
    if (missing) {
      throw new ProblemError(400, 'unknown_role', `There is no role named ${missing}.`, {
        errors: [{ location: 'request/body/roles', message: `unknown role ${missing}` }],
      });
    }
    assertCallerHolds(caller, permissionsOfRoles(roles), 'a role');
    return roles.map((r) => r.id);
  }

  async function get(id: string) {
    const user = await users.findListedUser(db, id);
    if (!user) throw notFound();
    return user;
  }

  return {
    get,

    async list(query: { limit?: number; cursor?: string } & users.UserFilter) {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      const rows = await users.listUsersPage(db, { limit, after, filter: { status: query.status, role: query.role, search: query.search } });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const nextCursor = rows.length > limit && last ? encodeCursor({ createdAt: last.cursor_created_at, id: last.id }) : null;
      return { page, nextCursor };
    },

    async create(caller: ReadonlySet<string>, input: { email: string; first_name: string; last_name: string; roles?: string[]; password?: string }) {
      let passwordHash: string | null = null;
      if (input.password !== undefined) {
        const violation = passwordPolicyViolation(input.password);
        if (violation) {
          throw new ProblemError(400, 'password_policy', violation, { errors: [{ location: 'request/body/password', message: violation }] });
        }
        passwordHash = await hashPassword(input.password);
      }
      try {
        const id = await db.transaction().execute(async (trx) => {
          const roleIds = await grantableRoles(trx, caller, input.roles ?? []);
          const userId = await users.insertUser(trx, {
            email: input.email,
            first_name: input.first_name,
            last_name: input.last_name,
            password_hash: passwordHash,
            now: clock.now(),
          });
          await setUserRoles(trx, userId, roleIds);
          return userId;
        });
        return get(id);
      } catch (err) {
        if (isUniqueViolation(err, 'users_email_lower_key')) throw emailTaken();
        throw err;
      }
    },

    async update(
      caller: ReadonlySet<string>,
      id: string,
      input: { first_name?: string; last_name?: string; roles?: string[]; status?: 'active' | 'disabled' },
    ) {
      // Disabling (or re-enabling) is the users.disable permission's, whichever operation does it.
      if (input.status !== undefined && !caller.has('users.disable')) throw forbidden('users.disable');
      await db.transaction().execute(async (trx) => {
        if (!(await users.findUserForUpdate(trx, id))) throw notFound();
        const roleIds = input.roles ? await grantableRoles(trx, caller, input.roles) : undefined;
        const now = clock.now();
        await users.updateUserFields(trx, id, { first_name: input.first_name, last_name: input.last_name, status: input.status, now });
        if (roleIds) await setUserRoles(trx, id, roleIds);
        if (input.status === 'disabled') await revokeSessions(trx, { userId: id }, now, 'user_disabled');
      });
      return get(id);
    },

    /** Disables the user and revokes every session of theirs, in one transaction (idempotent); the record stays. */
    async disable(id: string) {
      await db.transaction().execute(async (trx) => {
        const user = await users.findUserForUpdate(trx, id);
        if (!user) throw notFound();
        const now = clock.now();
        if (user.status !== 'disabled') await users.updateUserFields(trx, id, { status: 'disabled', now });
        await revokeSessions(trx, { userId: id }, now, 'user_disabled');
      });
      return get(id);
    },
  };
}
