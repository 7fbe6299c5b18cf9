// Managing roles. A change is visible to the users holding the role on their very next request,
// because a person's permissions are read from these tables on every request, never cached; the
// API keys their holders created are kept in memory by each process, and dropped at the change's
// commit (triggers notify api_key_changes: src/api-keys/key-cache.ts).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import { DomainError } from '../errors.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import * as roles from './repository.js';
import { assertMayActOn, assertMayGrant, type Authority } from '../auth/authority.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { COMMAND_LINE, auditContext, type Origin } from '../audit/context.js';
import { changesBetween } from '../audit/changes.js';
import { permissionsOfRole, permissionsOfRoles } from './permissions.js';
import { PERMISSIONS, type Permission } from '../auth/permissions.js';
import type { RoleRow } from './repository.js';
import { cleanName, cleanText } from '../text/normalize.js';
import { resourceIdOr } from '../uuid.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';


const nameTaken = () => new DomainError('conflict', 'name_taken', 'Another role already has this name.');
const notFound = () => new DomainError('not_found', 'not_found', 'No role has this id.');
const builtIn = () => new DomainError('conflict', 'role_built_in', 'The built-in admin role cannot be changed or deleted.');

const translateUnique = <T>(work: () => Promise<T>) => translateUniqueViolation('roles_name_key_key', nameTaken, work);

/** A role's name and description as they are stored (src/text/normalize.ts): names are compared by their key. */
function cleanRoleText<T extends { name?: string; description?: string }>(input: T): T {
  return {
    ...input,
    ...(input.name === undefined ? {} : { name: cleanName(input.name, { location: 'request/body/name', maxLength: 64 }) }),
    ...(input.description === undefined ? {} : { description: cleanText(input.description, { location: 'request/body/description', maxLength: 500 }) }),
  };
}

/** The role's fields the audit trail shows, its permissions sorted and each once. */
const audited = (role: { name: string; description: string; permissions: readonly string[]; requires_second_factor: boolean }) => ({
  name: role.name,
  description: role.description,
  permissions: [...new Set(role.permissions)].sort(),
  requires_second_factor: role.requires_second_factor,
});

/** The audit event's parts every role's event shares: who, from where, which role. */
const roleEvent = (authority: Authority, origin: Origin, role: { id: string; name: string }, at: Date) => ({
  at,
  context: auditContext(authority, origin),
  target: { type: 'role' as const, id: role.id, label: role.name },
});

export class RoleService {
  constructor(private readonly deps: ServiceDeps) {}

  list() {
    return roles.listRoles(this.deps.db);
  }

  async get(id: string) {
    id = resourceIdOr(id, notFound);
    const role = await roles.findRoleById(this.deps.db, id);
    if (!role) throw notFound();
    return role;
  }

  /**
   * Made in the transaction it is given, which its caller opened and ends. The answer is read in
   * it: after the commit, a concurrent DELETE may have removed the role.
   */
  async create(
    trx: Kysely<Database>,
    authority: Authority,
    sent: { name: string; description?: string; permissions: string[]; requires_second_factor?: boolean },
    origin: Origin = COMMAND_LINE,
  ) {
    const input = cleanRoleText(sent);
    assertMayGrant(authority, input.permissions, 'a role');
    return translateUnique(async () => {
      const now = this.deps.clock.now();
      const role = { name: input.name, description: input.description ?? '', permissions: input.permissions, requires_second_factor: input.requires_second_factor ?? false };
      const roleId = await roles.insertRole(trx, { ...role, requiresSecondFactor: role.requires_second_factor, now });
      await roles.replaceRolePermissions(trx, roleId, input.permissions);
      await recordAuditEvent(trx, { type: 'role_created', ...roleEvent(authority, origin, { id: roleId, ...role }, now), changes: { before: null, after: audited(role) } });
      return (await roles.findRoleById(trx, roleId))!;
    });
  }

  async update(
    authority: Authority,
    id: string,
    sent: { name?: string; description?: string; permissions?: string[]; requires_second_factor?: boolean },
    origin: Origin = COMMAND_LINE,
    precondition?: Precondition,
  ) {
    id = resourceIdOr(id, notFound);
    const input = cleanRoleText(sent);
    // The answer is the role as this change left it, read in the transaction: after the commit, a
    // concurrent DELETE may have removed it (test/roles.test.ts).
    // Requiring a second factor, or no longer, acts on every holder (locked out until they enrol,
    // or less protected): their rows and roles are locked and judged with the role's.
    const flagChanges = (role: RoleRow) => input.requires_second_factor !== undefined && input.requires_second_factor !== role.requires_second_factor;
    return translateUnique(() =>
      this.onLockedRole(id, flagChanges, async (trx, role, holdersHold) => {
        assertPrecondition(precondition, roles.roleRevision(role));
        if (role.built_in) throw builtIn();
        if (input.permissions) {
          const held = permissionsOfRole(role) as string[];
          assertMayGrant(authority, input.permissions.filter((p) => !held.includes(p)), 'a role');
          // Taking a permission away from a role takes it from everyone holding the role.
          if (held.some((p) => !input.permissions!.includes(p))) assertMayActOn(authority, held, 'This role');
        }
        if (flagChanges(role)) assertMayActOn(authority, [...permissionsOfRole(role), ...holdersHold!], 'This role or a person holding it');
        const now = this.deps.clock.now();
        const after = {
          name: input.name,
          description: input.description,
          permissions: input.permissions && audited({ ...role, permissions: input.permissions }).permissions,
          requires_second_factor: input.requires_second_factor,
        };
        const changes = changesBetween(audited(role), after);
        // Nothing changes (the role sent back as read): nothing written, nothing recorded, the same ETag.
        if (!changes) return role;
        await roles.updateRoleFields(trx, id, { name: input.name, description: input.description, requires_second_factor: input.requires_second_factor, now });
        if (input.permissions) await roles.replaceRolePermissions(trx, id, input.permissions);
        await recordAuditEvent(trx, { type: 'role_updated', ...roleEvent(authority, origin, { id, name: input.name ?? role.name }, now), changes });
        return (await roles.findRoleById(trx, id))!;
      }),
    );
  }

  async delete(authority: Authority, id: string, origin: Origin = COMMAND_LINE, precondition?: Precondition) {
    id = resourceIdOr(id, notFound);
    // Deleting a role that requires a second factor lifts the requirement from every holder.
    const requiresSecondFactor = (role: RoleRow) => role.requires_second_factor;
    await this.onLockedRole(id, requiresSecondFactor, async (trx, role, holdersHold) => {
      assertPrecondition(precondition, roles.roleRevision(role));
      if (role.built_in) throw builtIn();
      if (requiresSecondFactor(role)) assertMayActOn(authority, [...permissionsOfRole(role), ...holdersHold!], 'This role or a person holding it');
      else assertMayActOn(authority, permissionsOfRole(role), 'This role');
      await roles.deleteRole(trx, id);
      const now = this.deps.clock.now();
      await recordAuditEvent(trx, { type: 'role_deleted', ...roleEvent(authority, origin, role, now), changes: { before: audited(role), after: null } });
    });
  }

  /**
   * Runs `work` in a transaction of its own on the role locked FOR UPDATE (404 for an unknown one).
   * When `actsOnHolders` says the change acts on the people holding the role (its second-factor
   * requirement), their rows and roles are locked first (roles.lockRoleWithHolders, the lock order
   * of docs/AUTH.md) and `work` gets every permission they hold; a role an identity provider maps
   * is granted at sign-in to whoever the directory lists, administrators included, so its holders
   * count as holding the whole catalogue. Started again when the role moved between the first read
   * and the locks (someone granted it, or its requirement changed): each time needs a change
   * committed in that moment, so a few attempts are plenty.
   */
  private async onLockedRole<T>(
    id: string,
    actsOnHolders: (role: RoleRow) => boolean,
    work: (trx: Kysely<Database>, role: RoleRow, holdersHold: Set<Permission> | undefined) => Promise<T>,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.deps.db.transaction().execute(async (trx): Promise<{ done: T } | undefined> => {
        const seen = await roles.findRoleById(trx, id);
        if (!seen) throw notFound();
        if (seen.built_in || !actsOnHolders(seen)) {
          const role = await roles.lockRole(trx, id);
          if (!role) throw notFound();
          // Its requirement changed meanwhile, so the change now acts on its holders: again, with them.
          if (!role.built_in && actsOnHolders(role)) return undefined;
          return { done: await work(trx, role, undefined) };
        }
        const locked = await roles.lockRoleWithHolders(trx, id);
        if (!locked) throw notFound();
        if (locked === 'moved') return undefined;
        const mapped = await roles.isMappedByIdentityProvider(trx, id);
        const holdersHold = mapped ? new Set(PERMISSIONS) : permissionsOfRoles(locked.holders.flatMap((h) => h.roles));
        return { done: await work(trx, locked.role, holdersHold) };
      });
      if (outcome) return outcome.done;
      if (attempt >= MAX_LOCK_ATTEMPTS) throw new Error(`The role ${id} kept changing while its holders were locked (${attempt} attempts).`);
    }
  }
}

/** How many times onLockedRole starts again on a role that moved: each start needs another change committed in that moment. */
const MAX_LOCK_ATTEMPTS = 10;
