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
import { permissionsOfRole } from './permissions.js';
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
    return translateUnique(() =>
      this.deps.db.transaction().execute(async (trx) => {
        const role = await roles.lockRole(trx, id);
        if (!role) throw notFound();
        assertPrecondition(precondition, roles.roleRevision(role));
        if (role.built_in) throw builtIn();
        if (input.permissions) {
          const held = permissionsOfRole(role) as string[];
          assertMayGrant(authority, input.permissions.filter((p) => !held.includes(p)), 'a role');
          // Taking a permission away from a role takes it from everyone holding the role.
          if (held.some((p) => !input.permissions!.includes(p))) assertMayActOn(authority, held, 'This role');
        }
        // Requiring a second factor, or no longer, changes what every holder may do (locked out
        // until they enrol, or less protected): as taking a permission away, it needs all the role holds.
        if (input.requires_second_factor !== undefined && input.requires_second_factor !== role.requires_second_factor) {
          assertMayActOn(authority, permissionsOfRole(role), 'This role');
        }
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
    await this.deps.db.transaction().execute(async (trx) => {
      const role = await roles.lockRole(trx, id);
      if (!role) throw notFound();
      assertPrecondition(precondition, roles.roleRevision(role));
      if (role.built_in) throw builtIn();
      assertMayActOn(authority, permissionsOfRole(role), 'This role');
      await roles.deleteRole(trx, id);
      const now = this.deps.clock.now();
      await recordAuditEvent(trx, { type: 'role_deleted', ...roleEvent(authority, origin, role, now), changes: { before: audited(role), after: null } });
    });
  }
}
