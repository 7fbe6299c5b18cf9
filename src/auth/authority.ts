// The one rule of every operation that changes rights (docs/AUTH.md, "Changing rights"): nobody
// gains, prolongs or takes away a right they do not hold themselves, and there is always an
// administrator. Every rights-changing service method takes the caller's Authority and asks these
// functions; none re-implements the comparison.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Principal } from './principal.js';
import { ADMIN_ROLE_ID, type Permission } from './permissions.js';
import { DomainError } from '../errors.js';

/**
 * Who asks for a change: a signed-in person or an API key (each with its permission set, a key's
 * being its effective set), or the operator at the command line, who holds everything (whoever
 * can run it can already write to the database).
 */
export type Authority = Principal | { kind: 'operator' };

export const OPERATOR: Authority = { kind: 'operator' };

/** The permissions in `wanted` that the caller does not hold, sorted, each once. */
export function lacking(authority: Authority, wanted: Iterable<string>): Permission[] {
  if (authority.kind === 'operator') return [];
  return [...new Set([...wanted].filter((p) => !authority.permissions.has(p)))].sort() as Permission[];
}

/** True when the caller is this user (a person acting on themselves). */
export function isSelf(authority: Authority, userId: string): boolean {
  return authority.kind === 'user' && authority.userId === userId;
}

/**
 * Nobody hands out a permission they do not hold: to a role, to a user (through roles) or to a new
 * API key. 403 permission_denied naming the first missing permission and listing all of them.
 */
export function assertMayGrant(authority: Authority, permissions: Iterable<string>, what: string): void {
  const missing = lacking(authority, permissions);
  if (missing.length === 0) return;
  throw new DomainError('forbidden', 'permission_denied', `You cannot grant ${what} holding ${missing.join(', ')}: permissions you do not have.`, {
    required_permission: missing[0],
    missing_permissions: missing,
  });
}

/**
 * Nobody takes away, obtains or prolongs what they could not give: acting on a target (a user, a
 * role, an API key) that holds a permission the caller lacks is refused with 403
 * target_outranks_caller listing the missing permissions.
 */
export function assertMayActOn(authority: Authority, targetPermissions: Iterable<string>, what: string): void {
  const missing = lacking(authority, targetPermissions);
  if (missing.length === 0) return;
  throw new DomainError('forbidden', 'target_outranks_caller', `${what} holds permissions you do not have: ${missing.join(', ')}.`, {
    missing_permissions: missing,
  });
}

// Any transaction that may leave fewer administrators takes this lock before counting them, so two
// of them (two administrators demoting each other) run one after the other: the second one's count
// is a new statement, which under READ COMMITTED sees what the first committed.
const LAST_ADMIN_LOCK = 0x6c61_7374; // 'last'

/**
 * There is always an administrator: call inside the transaction that is about to demote or disable
 * `userId`, an active holder of the admin role. 409 last_admin when no other active user holds it.
 */
export async function assertAnotherAdminRemains(trx: Kysely<Database>, userId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(${LAST_ADMIN_LOCK})`.execute(trx);
  const { rows } = await sql<{ others: boolean }>`
    select exists (
      select 1 from users u
      join user_roles ur on ur.user_id = u.id
      where ur.role_id = ${ADMIN_ROLE_ID} and u.status = 'active' and u.id <> ${userId}
    ) as others`.execute(trx);
  if (!rows[0]?.others) {
    throw new DomainError('conflict', 'last_admin', 'This is the last active administrator; make another user an administrator first.');
  }
}
