// SCIM 2.0 Groups (RFC 7643 4.2, RFC 7644): a group is a role of this service (id = the
// role's id, displayName = its name), its members the people holding it. A directory changes who
// is a member, nothing else: roles are made, renamed and deleted by administrators in the back
// office, so creating or deleting a group is `403 groups_are_roles` and a changed displayName is
// `400 mutability` (docs/IDENTITY.md, "Groups are roles").
//
// Every membership change is a grant or a revocation of the role, made by the users service's own
// change of a person's roles (UserService.update, in this request's transaction): the same checks
// (assertMayGrant on the role, assertMayActOn on the person, the last active administrator), the
// same audit event (`user_updated`, roles before/after) and public event (`user.updated`). Who
// sees what: a key sees the groups whose permissions it holds all of (the roles it may grant and
// take) and, in them, the people it may see (src/scim/repository.ts, visibleTo); any other
// group is the same 404 as an unknown id, any other person named as a member the same
// `400 invalidValue` as an unknown id. One transaction per request: if any operation fails,
// nothing is written.
import type { Kysely } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import type { UserService } from '../users/service.js';
import { DomainError } from '../errors.js';
import { resourceId } from '../uuid.js';
import { lacking, type Authority } from '../auth/authority.js';
import { PERMISSIONS } from '../auth/permissions.js';
import { findRoleById, listRoles, lockRolesOfUser, roleNameKey, rolesOfUser, type RoleRow } from '../roles/repository.js';
import { permissionsOfRole, permissionsOfRoles } from '../roles/permissions.js';
import type { Origin } from '../audit/context.js';
import { visibleMembersOfRoles, visibleUsers, type GroupMemberRow } from './repository.js';
import { parseGroupFilter, type GroupFilter } from './filter.js';
import { assertNoPrototypeNames, DEFAULT_COUNT, MAX_COUNT } from './users.js';
import { lockWithStandingNow } from './standing.js';

export type ScimGroup = components['schemas']['ScimGroup'];
export const GROUP_SCHEMA = 'urn:ietf:params:scim:schemas:core:2.0:Group';
/** The most member values one request may name (a PATCH's operations together, or a PUT's list). */
export const MAX_MEMBERS_PER_REQUEST = 1000;

const notFound = () => new DomainError('not_found', 'not_found', 'No group has this id.');
const invalidValue = (detail: string) => new DomainError('invalid', 'invalid_value', detail);
const invalidPath = (path: string) => new DomainError('invalid', 'invalid_path', `The PATCH path ${path} names no attribute of a Group that can be changed here.`);
const unknownMember = (text: string) => invalidValue(`No user has the id ${text.slice(0, 100)}.`);
const renamed = () =>
  new DomainError('invalid', 'mutability', "A group's displayName is its role's name, which administrators choose in the back office; it cannot change through SCIM.");
const readOnly = (name: string) => new DomainError('invalid', 'mutability', `${name} is read-only.`);
export const groupsAreRoles = () =>
  new DomainError(
    'forbidden',
    'groups_are_roles',
    "Groups here are the service's roles, which administrators create and delete in the back office; a directory only changes who is a member of one.",
  );

/** What an operation does to the set of members (the people holding the role whom the key may see). */
type Change = { kind: 'add' | 'remove' | 'replace'; ids: string[] } | { kind: 'clear' };

const CORE_GROUP = `${GROUP_SCHEMA}:`.toLowerCase();
const MEMBER_FILTER = /^members\s*\[\s*value\s+eq\s+"([^"]*)"\s*\]$/i;

/**
 * Refuses a request naming more than MAX_MEMBERS_PER_REQUEST member values, counted on the parsed
 * changes (so every spelling changesOf accepts, `members`, ` members`, the schema-prefixed name,
 * counts), before anything is read: a larger list would also exceed what one query may bind.
 */
function assertWithinMemberLimit(changes: readonly Change[]): void {
  const count = changes.reduce((sum, change) => sum + (change.kind === 'clear' ? 0 : change.ids.length), 0);
  if (count > MAX_MEMBERS_PER_REQUEST) {
    throw new DomainError('invalid', 'too_many_members', `A request may name at most ${MAX_MEMBERS_PER_REQUEST} members; this one names ${count}. Send them in several requests.`);
  }
}

/** The ids of a members value: a list of `{value}` (a `display`, `$ref` or `type` beside it is ignored). */
function memberIds(value: unknown): string[] {
  if (!Array.isArray(value)) throw invalidValue('members takes a list of {"value": "<user id>"}.');
  return value.map((member) => {
    if (member === null || typeof member !== 'object' || typeof (member as { value?: unknown }).value !== 'string') {
      throw invalidValue('Each member is {"value": "<user id>"}.');
    }
    return (member as { value: string }).value;
  });
}

/** A sent displayName: the role's own name (any case), or a refusal. */
function assertSameName(role: RoleRow, value: unknown): void {
  if (typeof value !== 'string' || roleNameKey(value) !== role.name_key) throw renamed();
}

/** A sent id: the group's own, or a refusal (Okta's path-less replace sends it back). */
function assertSameId(role: RoleRow, value: unknown): void {
  if (typeof value !== 'string' || resourceId(value) !== role.id) throw readOnly('id');
}

/** An attribute name without the core Group schema's prefix, lower-cased (SCIM names are case-insensitive). */
const attributeName = (path: string) => {
  const lower = path.trim().toLowerCase();
  return lower.startsWith(CORE_GROUP) ? lower.slice(CORE_GROUP.length) : lower;
};

/**
 * The operations as changes of the membership, read without the group (so the member limit is
 * checked before anything is read), and the checks of what they may not change that need the
 * group's role (a displayName or id sent back must be its own), to run once it is locked.
 */
function changesOf(operations: { op: string; path?: string; value?: unknown }[]): { changes: Change[]; check: (role: RoleRow) => void } {
  const changes: Change[] = [];
  const names: unknown[] = [];
  const ids: unknown[] = [];
  for (const operation of operations) {
    assertNoPrototypeNames(operation, 'Group');
    const op = operation.op.toLowerCase() as 'add' | 'remove' | 'replace';
    if (operation.path === undefined) {
      if (op === 'remove') throw new DomainError('invalid', 'no_target', 'A remove operation needs a path.');
      if (operation.value === null || typeof operation.value !== 'object' || Array.isArray(operation.value)) {
        throw invalidValue('An operation without a path takes an object of attributes as its value.');
      }
      for (const [key, value] of Object.entries(operation.value)) {
        const name = attributeName(key);
        if (name === 'members') changes.push({ kind: op, ids: memberIds(value) });
        else if (name === 'displayname') names.push(value);
        else if (name === 'id') ids.push(value);
        else if (name === 'meta') throw readOnly('meta');
        else if (name !== 'externalid' && name !== 'schemas') {
          throw new DomainError('invalid', 'validation_failed', `${key} is not an attribute of a Group here.`, {
            errors: [{ location: `request/body/${key}`, message: 'is not an attribute of a Group here', error_code: 'unknown_attribute' }],
          });
        }
      }
      continue;
    }
    const path = operation.path.trim();
    const filtered = MEMBER_FILTER.exec(attributeName(path));
    const name = attributeName(path);
    if (filtered) {
      // Entra ID's removal of one member; adding or replacing through a filter names nothing new.
      if (op !== 'remove') throw invalidPath(path);
      changes.push({ kind: 'remove', ids: [filtered[1]!] });
    } else if (name === 'members') {
      if (op === 'remove') changes.push(operation.value === undefined ? { kind: 'clear' } : { kind: 'remove', ids: memberIds(operation.value) });
      else changes.push({ kind: op, ids: memberIds(operation.value) });
    } else if (name === 'displayname') {
      if (op === 'remove') throw renamed();
      names.push(operation.value);
    } else if (name === 'id' || name === 'meta' || name.startsWith('meta.')) {
      throw readOnly(name.startsWith('meta') ? 'meta' : 'id');
    } else if (name !== 'externalid') {
      throw invalidPath(path);
    }
  }
  const check = (role: RoleRow) => {
    for (const name of names) assertSameName(role, name);
    for (const id of ids) assertSameId(role, id);
  };
  return { changes, check };
}

const permissionsOf = (authority: Authority): ReadonlySet<string> => (authority.kind === 'operator' ? new Set<string>(PERMISSIONS) : authority.permissions);
/** A key sees a group when it holds every permission of its role (it may grant and take it). */
const maySee = (authority: Authority, role: RoleRow) => lacking(authority, permissionsOfRole(role)).length === 0;

function present(role: RoleRow, members: GroupMemberRow[] | undefined): ScimGroup {
  const group: ScimGroup = {
    schemas: [GROUP_SCHEMA],
    id: role.id,
    displayName: role.name,
    meta: {
      resourceType: 'Group',
      created: role.created_at.toISOString(),
      lastModified: role.updated_at.toISOString(),
      location: `/scim/v2/Groups/${role.id}`,
      version: `W/"${role.version}"`,
    },
  };
  if (members) {
    group.members = members.map((m) => ({ value: m.id, display: `${m.first_name} ${m.last_name}`.trim(), $ref: `/scim/v2/Users/${m.id}` }));
  }
  return group;
}

const excludesMembers = (excluded: string | undefined) =>
  (excluded ?? '').split(',').some((name) => attributeName(name) === 'members');

async function presentOne(executor: Kysely<Database>, authority: Authority, role: RoleRow, excluded?: string): Promise<ScimGroup> {
  if (excludesMembers(excluded)) return present(role, undefined);
  return present(role, await visibleMembersOfRoles(executor, [role.id], permissionsOf(authority)));
}

/** The group's role when the key may see it, not locked; else the same 404 as an unknown id. */
async function findVisible(trx: Kysely<Database>, authority: Authority, text: string): Promise<RoleRow> {
  const id = resourceId(text);
  const role = id ? await findRoleById(trx, id) : undefined;
  if (!role || !maySee(authority, role)) throw notFound();
  return role;
}

/**
 * The group's role, locked against change (FOR SHARE) and read again, when the key may see it;
 * else the same 404 as an unknown id. A membership change takes it after the people (the lock
 * order of docs/AUTH.md: people, then roles), so it never deadlocks with a change of the role that
 * locks its holders first (its second-factor requirement).
 */
async function lockVisible(trx: Kysely<Database>, authority: Authority, text: string): Promise<RoleRow> {
  const id = resourceId(text);
  const locked = id && (await trx.selectFrom('roles').select('id').where('id', '=', id).forShare().executeTakeFirst());
  const role = locked ? await findRoleById(trx, locked.id) : undefined;
  if (!role || !maySee(authority, role)) throw notFound();
  return role;
}

/** For each person a filter names as a member: the ids of the roles they hold, when the key may see them (else none). */
async function membershipsNamed(executor: Kysely<Database>, authority: Authority, filter: GroupFilter | undefined): Promise<Map<string, Set<string>>> {
  const named = new Set<string>();
  const collect = (f: GroupFilter): void => (f.op === 'eq' ? void (f.attribute === 'member' && named.add(f.value)) : f.filters.forEach(collect));
  if (filter) collect(filter);
  const memberships = new Map<string, Set<string>>();
  for (const text of named) {
    const id = resourceId(text);
    const held = id ? await rolesOfUser(executor, id) : [];
    memberships.set(text, new Set(lacking(authority, permissionsOfRoles(held)).length > 0 ? [] : held.map((r) => r.id)));
  }
  return memberships;
}

export class ScimGroupService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly users: UserService,
  ) {}

  async get(authority: Authority, text: string, excluded?: string): Promise<ScimGroup> {
    const id = resourceId(text);
    if (!id) throw notFound();
    return this.deps.db.transaction().execute(async (trx) => {
      const role = await findRoleById(trx, id);
      if (!role || !maySee(authority, role)) throw notFound();
      return presentOne(trx, authority, role, excluded);
    });
  }

  /** The groups the key may see, by name (roles are few: read whole, filtered and paged here). */
  async list(authority: Authority, query: { filter?: string; startIndex?: number; count?: number; excludedAttributes?: string }) {
    const filter = query.filter === undefined ? undefined : parseGroupFilter(query.filter);
    const startIndex = query.startIndex ?? 1;
    const count = Math.min(query.count ?? DEFAULT_COUNT, MAX_COUNT);
    return this.deps.db.transaction().execute(async (trx) => {
      const memberships = await membershipsNamed(trx, authority, filter);
      const matching = (await listRoles(trx)).filter((role) => maySee(authority, role) && (!filter || matches(role, filter, memberships)));
      const page = matching.slice(startIndex - 1, startIndex - 1 + count);
      const members = excludesMembers(query.excludedAttributes) ? undefined : await visibleMembersOfRoles(trx, page.map((r) => r.id), permissionsOf(authority));
      const Resources = page.map((role) => present(role, members?.filter((m) => m.role_id === role.id)));
      return { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse' as const], totalResults: matching.length, startIndex, itemsPerPage: page.length, Resources };
    });
  }

  async patch(authority: Authority, id: string, operations: { op: string; path?: string; value?: unknown }[], origin: Origin): Promise<ScimGroup> {
    const { changes, check } = changesOf(operations);
    assertWithinMemberLimit(changes);
    return this.deps.db.transaction().execute(async (trx) => {
      check(await findVisible(trx, authority, id));
      const applied = await this.apply(trx, authority, id, changes, origin, check);
      return presentOne(trx, applied.authority, applied.role);
    });
  }

  /** PUT: `members` becomes the membership (among the people the key may see); without `members`, it stays as it is. */
  async replace(authority: Authority, id: string, sent: ScimGroup, origin: Origin): Promise<ScimGroup> {
    const changes: Change[] = sent.members ? [{ kind: 'replace', ids: sent.members.map((m) => m.value) }] : [];
    assertWithinMemberLimit(changes);
    return this.deps.db.transaction().execute(async (trx) => {
      if (!sent.members) {
        const role = await lockVisible(trx, authority, id);
        assertSameName(role, sent.displayName);
        return presentOne(trx, authority, role);
      }
      assertSameName(await findVisible(trx, authority, id), sent.displayName);
      const applied = await this.apply(trx, authority, id, changes, origin, (role) => assertSameName(role, sent.displayName));
      return presentOne(trx, applied.authority, applied.role);
    });
  }

  create(): never {
    throw groupsAreRoles();
  }

  delete(): never {
    throw groupsAreRoles();
  }

  /**
   * Makes the membership what `changes` say, person by person, through the users service: in the
   * order people are named, then those a replace or a clear leaves out. A person named who is
   * unknown, or whom the key may not see, is `400 invalidValue` (the same words, decided without
   * locking them): nothing is written, the transaction rolls back what was.
   *
   * Who is a member now is read after the people are locked, never before: a list read earlier may
   * still name someone whose role an administrator was taking at that moment. And nobody the
   * request does not name is ever given the role: a replace or a clear only takes it from them.
   */
  private async apply(
    trx: Kysely<Database>,
    authority: Authority,
    groupId: string,
    changes: Change[],
    origin: Origin,
    check: (role: RoleRow) => void,
  ): Promise<{ authority: Authority; role: RoleRow }> {
    const permissions = permissionsOf(authority);
    const named: { text: string; id: string | undefined }[] = [];
    const seen = new Set<string>();
    for (const change of changes) {
      if (change.kind === 'clear') continue;
      for (const text of change.ids) {
        if (seen.has(text)) continue;
        seen.add(text);
        named.push({ text, id: resourceId(text) });
      }
    }
    const visible = await visibleUsers(trx, [...new Set(named.flatMap((n) => (n.id ? [n.id] : [])))], permissions);
    for (const { text, id } of named) if (!id || !visible.has(id)) throw unknownMember(text);
    // The members as they were, only to lock them with the people named (and the key's creator), in id order.
    const before = (await visibleMembersOfRoles(trx, [groupId], permissions)).map((m) => m.id);
    const standing = await lockWithStandingNow(trx, authority, [...new Set([...visible, ...before])]);
    const found = standing.found;
    authority = standing.authority;
    // Then the group's role, as it is now; the key's rights as they are now must still cover it,
    // or it is the same 404 as an unknown one.
    const role = await lockVisible(trx, authority, groupId);
    check(role);
    const current = (await visibleMembersOfRoles(trx, [role.id], permissionsOf(authority))).map((m) => m.id);
    const members = new Set(current);
    for (const change of changes) {
      if (change.kind === 'clear') members.clear();
      else {
        const changed = change.ids.map(resourceId).filter((id): id is string => id !== undefined);
        if (change.kind === 'replace') members.clear();
        for (const id of changed) {
          if (change.kind === 'remove') members.delete(id);
          else members.add(id);
        }
      }
    }
    const people = [...named.map((n) => ({ text: n.text, id: n.id!, isNamed: true })), ...current.map((id) => ({ text: id, id, isNamed: false }))];
    const done = new Set<string>();
    for (const { text, id, isNamed } of people) {
      if (done.has(id)) continue;
      if (isNamed && !found.has(id)) throw unknownMember(text);
      done.add(id);
      const held = await lockRolesOfUser(trx, id);
      if (lacking(authority, permissionsOfRoles(held)).length > 0) throw unknownMember(text);
      const holds = held.some((r) => r.id === role.id);
      if (holds === members.has(id) || (!holds && !isNamed)) continue;
      const roles = holds ? held.filter((r) => r.id !== role.id).map((r) => r.name) : [...held.map((r) => r.name), role.name];
      await this.users.update(authority, id, { roles }, origin, undefined, { trx });
    }
    return { authority, role };
  }
}

function matches(role: RoleRow, filter: GroupFilter, memberships: Map<string, Set<string>>): boolean {
  if (filter.op !== 'eq') {
    return filter.op === 'and' ? filter.filters.every((f) => matches(role, f, memberships)) : filter.filters.some((f) => matches(role, f, memberships));
  }
  if (filter.attribute === 'id') return resourceId(filter.value) === role.id;
  if (filter.attribute === 'member') return memberships.get(filter.value)?.has(role.id) ?? false;
  return roleNameKey(filter.value) === role.name_key;
}
