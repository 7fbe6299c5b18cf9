// Managing users. E-mail uniqueness is the unique index on the address's key (src/users/names.ts:
// RFC 8265's comparison, so case and full-width letters do not make a second address): two racing
// creates both reach the INSERT and the loser gets 409, with nothing written.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import { DomainError, permissionDenied } from '../errors.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { hashPassword, passwordPolicyViolation } from '../auth/secrets/passwords.js';
import { lockRolesByName, lockRolesOfUser, roleNameKey, setUserRoles, type RoleRow } from '../roles/repository.js';
import { includesAdmin, isAdminRole, permissionsOfRoles } from '../roles/permissions.js';
import { assertAnotherAdminRemains, assertMayActOn, assertMayGrant, lacking, type Authority } from '../auth/authority.js';
import * as users from './repository.js';
import { EMAIL_UNIQUE_INDEX, cleanUserText } from './names.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { presentUser, type UserResource } from './presenter.js';
import { COMMAND_LINE, auditContext, type Origin } from '../audit/context.js';
import type { Actor } from '../audit/events.js';
import { changesBetween } from '../audit/changes.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { resourceIdOr } from '../uuid.js';
import { keysetPage } from '../pagination/keyset-page.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import type { Principal } from '../auth/principal.js';

export const DEFAULT_PAGE_SIZE = 50;

const notFound = () => new DomainError('not_found', 'not_found', 'No user has this id.');
const emailTaken = () => new DomainError('conflict', 'email_taken', 'Another user already has this e-mail address.');

const roleNames = (roles: readonly { name: string }[]) => roles.map((r) => r.name).sort();

/**
 * Ends every live session of the user and records it, in the caller's transaction: the sessions'
 * one revocation path (src/auth/sessions/revocation.ts, revokeSessions), handed in by whoever builds
 * this service. Sessions sit above users (signing in reads users), so users never import them.
 */
export type EndSessions = (trx: Kysely<Database>, where: { userId: string }, reason: 'user_disabled', at: Date, origin: Origin, actor: Actor) => Promise<unknown>;

/**
 * How another domain runs a change of a user inside its own transaction (SCIM provisioning,
 * src/scim): `trx`, the transaction (nothing is read outside it); `statusPermission`, the
 * permission that lets the caller change a status in place of `users.disable` (the SCIM operations'
 * own, `scim.provision`: provisioning is disabling people the key has authority over).
 */
export interface WithinTransaction {
  trx?: Kysely<Database>;
  statusPermission?: string;
}

/** A user to create, as `UserService.draft` checked it: no password, its hash (null: none set). */
export interface UserDraft {
  email: string;
  first_name: string;
  last_name: string;
  roles?: string[];
  passwordHash: string | null;
}

export class UserService {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly endSessions: EndSessions,
  ) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
  }

  async get(id: string, executor: Kysely<Database> = this.deps.db) {
    id = resourceIdOr(id, notFound);
    const user = await users.findListedUser(executor, id);
    if (!user) throw notFound();
    return user;
  }

  /** The user, or undefined (no error: the caller decides what a missing user means). */
  find(id: string) {
    return users.findListedUser(this.deps.db, id);
  }

  async list(query: { limit?: number; cursor?: string } & users.UserFilter) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const filter = { status: query.status, role: query.role, search: query.search };
    const after = query.cursor === undefined ? undefined : decodeCursor(await this.cursorKey(), query.cursor, filter);
    const rows = await users.listUsersPage(this.deps.db, { limit, after, filter });
    return keysetPage(rows, limit, async (last) => encodeCursor(await this.cursorKey(), { createdAt: last.cursor_created_at, id: last.id }, filter));
  }

  /**
   * A user to create, checked, its password (when one is given) hashed: done before the create's
   * transaction, as hashing is slow and must hold no connection.
   */
  async draft(sent: { email: string; first_name: string; last_name: string; roles?: string[]; password?: string }): Promise<UserDraft> {
    const { password, ...input } = cleanUserText(sent);
    let passwordHash: string | null = null;
    if (password !== undefined) {
      const violation = passwordPolicyViolation(password);
      if (violation) {
        throw new DomainError('invalid', 'password_policy', violation, { errors: [{ location: 'request/body/password', message: violation }] });
      }
      passwordHash = await hashPassword(password);
    }
    return { ...input, passwordHash };
  }

  /**
   * Made in the transaction it is given, which its caller opened and ends (a request's edge, SCIM's
   * request, the command line): the user as its public event and the answer show it, with its revision.
   */
  async create(trx: Kysely<Database>, authority: Authority, draft: UserDraft, origin: Origin = COMMAND_LINE): Promise<{ user: UserResource; revision: string }> {
    const { clock } = this.deps;
    return translateUniqueViolation(EMAIL_UNIQUE_INDEX, emailTaken, async () => {
      const roles = await grantableRoles(trx, authority, draft.roles ?? []);
      const userId = await users.insertUser(trx, {
        email: draft.email,
        first_name: draft.first_name,
        last_name: draft.last_name,
        password_hash: draft.passwordHash,
        // The caller chose this password, so it is not the user's own yet.
        must_change_password: draft.passwordHash !== null,
        now: clock.now(),
      });
      await setUserRoles(trx, userId, roles.map((r) => r.id));
      // Read in the transaction: the event shows it, the answer too.
      const created = (await users.findListedUser(trx, userId))!;
      const user = presentUser(created);
      await recordAuditEvent(trx, {
        type: 'user_created',
        at: clock.now(),
        context: auditContext(authority, origin),
        target: { type: 'user', id: userId, label: `${draft.first_name} ${draft.last_name}` },
        userId,
        details: { password_set: draft.passwordHash !== null },
        changes: { before: null, after: { email: draft.email, first_name: draft.first_name, last_name: draft.last_name, status: 'active', roles: roleNames(roles) } },
        publish: { data: user },
      });
      return { user, revision: created.revision };
    });
  }

  async update(
    authority: Authority,
    id: string,
    sent: { first_name?: string; last_name?: string; roles?: string[]; status?: 'active' | 'disabled' },
    origin: Origin = COMMAND_LINE,
    precondition?: Precondition,
    within: WithinTransaction = {},
  ) {
    id = resourceIdOr(id, notFound);
    const input = cleanUserText(sent);
    // Disabling (or re-enabling) is the users.disable permission's, whichever operation does it.
    const statusPermission = within.statusPermission ?? 'users.disable';
    if (input.status !== undefined && lacking(authority, [statusPermission]).length > 0) throw permissionDenied(statusPermission);
    await this.inTransaction(within, async (trx) => {
      // The row lock queues every change of this user's roles or status behind this one.
      const user = await users.lockUser(trx, id);
      if (!user) throw notFound();
      // Erasure cannot be undone (docs/ERASURE.md): the tombstone is never named, made active or given a role again.
      if (user.erased_at) throw new DomainError('conflict', 'user_erased', 'This person was erased: an erased person cannot be changed, made active or given a role.');
      const held = await lockRolesOfUser(trx, id);
      if (precondition) assertPrecondition(precondition, (await users.findUserRevision(trx, id))!);
      const roles = input.roles ? await grantableRoles(trx, authority, input.roles, held) : held;
      const removesRole = held.some((h) => !roles.some((r) => r.id === h.id));
      if (removesRole || input.status !== undefined) await assertMayTakeFrom(trx, authority, user, held, { roles, status: input.status ?? user.status });
      const now = this.deps.clock.now();
      const context = auditContext(authority, origin);
      const changes = changesBetween(
        { first_name: user.first_name, last_name: user.last_name, status: user.status, roles: roleNames(held) },
        { first_name: input.first_name, last_name: input.last_name, status: input.status, roles: input.roles && roleNames(roles) },
      );
      // Nothing changes (the user sent back as read): nothing written, nothing recorded, the same ETag.
      if (changes) {
        await users.updateUserFields(trx, id, { first_name: input.first_name, last_name: input.last_name, status: input.status, now });
        if (input.roles) await setUserRoles(trx, id, roles.map((r) => r.id));
        const label = `${input.first_name ?? user.first_name} ${input.last_name ?? user.last_name}`;
        const updated = (await users.findListedUser(trx, id))!;
        await recordAuditEvent(trx, { type: 'user_updated', at: now, context, target: { type: 'user', id, label }, userId: id, changes, publish: { data: presentUser(updated) } });
      }
      if (input.status === 'disabled') await this.endSessions(trx, { userId: id }, 'user_disabled', now, origin, context.actor);
    });
    return this.get(id, within.trx);
  }

  /** The language the person chose for the messages sent to them (null: none). */
  languageOf(id: string) {
    return users.languageOf(this.deps.db, id);
  }

  /**
   * The signed-in person's own language for the messages sent to them (docs/MAIL.md): `en`,
   * `fr`, or null for the default. Their own only: the person is the caller, nobody is named.
   * A change is recorded as `user_updated` with the language before and after; partners are not
   * told (the User they are shown does not carry it). The same language again writes and records
   * nothing; a person disabled meanwhile changes nothing either (their session is ending).
   */
  async setOwnLanguage(me: Extract<Principal, { kind: 'user' }>, language: 'en' | 'fr' | null, origin: Origin): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const changed = await users.setLanguage(trx, me.userId, language);
      if (!changed) return;
      await recordAuditEvent(trx, {
        type: 'user_updated',
        at: this.deps.clock.now(),
        context: auditContext(me, origin),
        target: { type: 'user', id: me.userId },
        userId: me.userId,
        changes: { before: { language: changed.before }, after: { language } },
      });
    });
  }

  /** Disables the user and revokes every session of theirs, in one transaction (idempotent); the record stays. */
  async disable(authority: Authority, id: string, origin: Origin = COMMAND_LINE, precondition?: Precondition, within: WithinTransaction = {}) {
    id = resourceIdOr(id, notFound);
    await this.inTransaction(within, async (trx) => {
      const user = await users.lockUser(trx, id);
      if (!user) throw notFound();
      const held = await lockRolesOfUser(trx, id);
      if (precondition) assertPrecondition(precondition, (await users.findUserRevision(trx, id))!);
      await assertMayTakeFrom(trx, authority, user, held, { roles: held, status: 'disabled' });
      const now = this.deps.clock.now();
      const context = auditContext(authority, origin);
      if (user.status !== 'disabled') {
        await users.updateUserFields(trx, id, { status: 'disabled', now });
        const target = { type: 'user' as const, id, label: `${user.first_name} ${user.last_name}` };
        const disabled = (await users.findListedUser(trx, id))!;
        await recordAuditEvent(trx, {
          type: 'user_disabled',
          at: now,
          context,
          target,
          userId: id,
          changes: { before: { status: user.status }, after: { status: 'disabled' } },
          publish: { data: presentUser(disabled) },
        });
      }
      await this.endSessions(trx, { userId: id }, 'user_disabled', now, origin, context.actor);
    });
    return this.get(id, within.trx);
  }

  /** The work in `within.trx` when given, else in a transaction of its own. */
  private inTransaction<T>(within: WithinTransaction, work: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return within.trx ? work(within.trx) : this.deps.db.transaction().execute(work);
  }
}

/**
 * The roles named, checked to exist and locked until the transaction ends; those not in `held`
 * already are checked to grant nothing the caller lacks. A role added that requires a second factor
 * acts on the person too (until they enrol they may do nothing else): unless a role they hold
 * already requires one, the caller must hold every permission they hold (docs/AUTH.md). The
 * admin role's requirement is not counted as one they hold already: ADMIN_SECOND_FACTOR may lift it.
 */
async function grantableRoles(trx: Kysely<Database>, authority: Authority, names: readonly string[], held: readonly RoleRow[] = []) {
  const roles = await lockRolesByName(trx, names);
  const found = new Set(roles.map((r) => r.name_key));
  const missing = names.find((n) => !found.has(roleNameKey(n)));
  if (missing) {
    throw new DomainError('invalid', 'unknown_role', `There is no role named ${missing}.`, {
      errors: [{ location: 'request/body/roles', message: `unknown role ${missing}` }],
    });
  }
  const added = roles.filter((r) => !held.some((h) => h.id === r.id));
  assertMayGrant(authority, permissionsOfRoles(added), 'a role');
  const requiredAlready = held.some((r) => r.requires_second_factor && !isAdminRole(r));
  if (!requiredAlready && added.some((r) => r.requires_second_factor)) assertMayActOn(authority, permissionsOfRoles(held), 'This user');
  return roles;
}

/**
 * The checks of a change that takes rights from a user (a role removed, a status change): the
 * caller holds everything the user holds, and an active administrator losing the admin role or
 * being disabled is not the last one.
 */
async function assertMayTakeFrom(trx: Kysely<Database>, authority: Authority, user: { id: string; status: string }, held: RoleRow[], after: { roles: RoleRow[]; status: string }) {
  assertMayActOn(authority, permissionsOfRoles(held), 'This user');
  const staysAdmin = includesAdmin(after.roles) && after.status === 'active';
  if (includesAdmin(held) && user.status === 'active' && !staysAdmin) await assertAnotherAdminRemains(trx, user.id);
}
