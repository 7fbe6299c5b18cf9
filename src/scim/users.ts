// SCIM 2.0 provisioning of people (RFC 7643, 7644): what Entra ID and Okta send, mapped
// onto this service's users through the users service itself (src/users/service.ts), so every rule
// of a change made by hand holds for a directory's change too (the caller's authority, the last
// administrator, audit events, ending sessions on disable). Each operation is one transaction:
// the person is locked, checked to be visible to the key, changed, and read back in it; a write
// acts on the key's rights as they are once the person (and the key's creator) are locked, not as
// they were at authentication (src/scim/standing.ts, shared with Groups).
//
// Who sees whom: a key sees (and may change) only people holding no permission it lacks; anyone
// else is the same 404 as an unknown id (src/scim/repository.ts, visibleTo).
import type { Kysely } from 'kysely';
import { scimPatch, type ScimPatchOperation } from 'scim-patch';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import type { UserService } from '../users/service.js';
import { DomainError } from '../errors.js';
import { resourceId } from '../uuid.js';
import { lacking, type Authority } from '../auth/authority.js';
import { PERMISSIONS } from '../auth/permissions.js';
import { lockRolesOfUser, rolesOfUser } from '../roles/repository.js';
import { permissionsOfRoles } from '../roles/permissions.js';
import { emailKey, isEmailAddress } from '../users/names.js';
import { namesFrom } from '../auth/identity-providers/provisioning.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { requestBodyErrors } from '../contract/request-body.js';
import { findScimUser, listScimUsers, setExternalId, type ScimUserRow } from './repository.js';
import { parseUserFilter } from './filter.js';
import { presentScimUser, type ScimUser } from './presenter.js';
import { lockWithStandingNow, PROVISIONING_PERMISSION } from './standing.js';

export const DEFAULT_COUNT = 100;
export const MAX_COUNT = 200;

const notFound = () => new DomainError('not_found', 'not_found', 'No user has this id.');
const invalidValue = (detail: string) => new DomainError('invalid', 'invalid_value', detail);
const invalidPath = (detail: string) => new DomainError('invalid', 'invalid_path', detail);
const unknownAttribute = (name: string) => new DomainError('invalid', 'validation_failed', `${name} is not an attribute of a User here.`, {
  errors: [{ location: `request/body/${name}`, message: 'is not an attribute of a User here', error_code: 'unknown_attribute' }],
});

const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
/** The attributes of a User (ScimUser in the contract), by their lower-case name: SCIM names are case-insensitive. */
const ATTRIBUTES = new Map(
  ['schemas', 'id', 'externalId', 'userName', 'name', 'displayName', 'active', 'emails', 'groups', 'meta', 'title', 'preferredLanguage', 'locale', 'timezone', 'nickName', 'userType', 'phoneNumbers', 'addresses', ENTERPRISE].map(
    (name) => [name.toLowerCase(), name],
  ),
);
/**
 * What a PATCH may not touch (RFC 7644 3.5.2: `400 mutability`, nothing written): the id, the
 * metadata, and the roles held (changed through /scim/v2/Groups). A PUT sending them back, as
 * Okta does, has them ignored (RFC 7644 3.5.1).
 */
const READ_ONLY = new Set(['id', 'meta', 'groups']);
const readOnly = (attribute: string) =>
  new DomainError('invalid', 'mutability', `${attribute} is read-only${attribute === 'groups' ? ': a person joins or leaves a group through /scim/v2/Groups' : ''}.`);

/** `active` as Entra ID sends it too: the string "True" / "False", in any case. */
function activeOf(value: unknown): boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value;
  if (typeof value === 'string' && ['true', 'false'].includes(value.toLowerCase())) return value.toLowerCase() === 'true';
  throw invalidValue('active must be true or false.');
}

/** What a SCIM User asks of a person here. */
interface Desired {
  email: string;
  firstName: string;
  lastName: string;
  active: boolean;
  externalId: string | null;
}

function desiredOf(user: ScimUser, current?: { active: boolean }): Desired {
  const email = typeof user.userName === 'string' ? user.userName.trim() : '';
  if (!isEmailAddress(email)) throw invalidValue('userName must be an e-mail address.');
  const names = namesFrom({ given_name: user.name?.givenName, family_name: user.name?.familyName, name: user.displayName || user.name?.formatted }, email);
  const externalId = typeof user.externalId === 'string' && user.externalId.trim() !== '' ? user.externalId.trim() : null;
  return { email, firstName: names.firstName, lastName: names.lastName, active: activeOf(user.active) ?? current?.active ?? true, externalId };
}

/** The canonical name of an attribute (first segment of a path), or a refusal naming it. */
function attributeOf(path: string): string | undefined {
  let rest = path.trim();
  if (rest.toLowerCase().startsWith(`${ENTERPRISE.toLowerCase()}:`) || rest.toLowerCase() === ENTERPRISE.toLowerCase()) return ENTERPRISE;
  if (rest.toLowerCase().startsWith(`${CORE_USER.toLowerCase()}:`)) rest = rest.slice(CORE_USER.length + 1);
  const name = rest.split(/[.[\s]/, 1)[0]!.toLowerCase();
  return ATTRIBUTES.get(name);
}

/** Names that reach an object's prototype when a path or a key is followed (any case: SCIM names are case-insensitive). */
const PROTOTYPE_NAMES = new Set(['__proto__', 'constructor', 'prototype']);
const namesPrototype = (text: string) => text.split(/[^A-Za-z0-9_$]+/).some((name) => PROTOTYPE_NAMES.has(name.toLowerCase()));

function keysNamePrototype(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (depth > 32) return true; // deeper than any SCIM User: refused rather than walked
  return Object.entries(value).some(([key, inner]) => namesPrototype(key) || keysNamePrototype(inner, depth + 1));
}

/**
 * scim-patch 0.8.3 follows a path's segments, and a value's keys, into inherited properties:
 * `name.__proto__.x` would set `x` on Object.prototype for the whole process (the second-factor
 * gate reads such a flag). No segment of a path, and no key of a value at any depth, may name a
 * prototype; a filter value that happens to is refused too.
 */
export function assertNoPrototypeNames(operation: { path?: string; value?: unknown }, resource = 'User'): void {
  if (operation.path !== undefined && namesPrototype(operation.path)) throw invalidPath(`The PATCH path ${operation.path} names no attribute of a ${resource}.`);
  if (keysNamePrototype(operation.value)) throw invalidValue(`A value names an attribute no ${resource} has.`);
}

/**
 * The operations as scim-patch applies them: `op` in lower case (Entra ID sends `Replace`), paths
 * with their attribute in its canonical case, `active` as a boolean, a path-less value's dotted keys
 * (`name.givenName`) as operations of their own. Operations on the enterprise extension (accepted,
 * not stored) are dropped. An attribute this service does not know is refused.
 */
function normalizeOperations(operations: { op: string; path?: string; value?: unknown }[]): ScimPatchOperation[] {
  const out: ScimPatchOperation[] = [];
  for (const operation of operations) {
    assertNoPrototypeNames(operation);
    const op = operation.op.toLowerCase() as 'add' | 'remove' | 'replace';
    if (operation.path !== undefined) {
      const attribute = attributeOf(operation.path);
      if (!attribute) throw invalidPath(`The PATCH path ${operation.path} names no attribute of a User.`);
      if (READ_ONLY.has(attribute)) throw readOnly(attribute);
      if (attribute === ENTERPRISE) continue;
      let path = operation.path.trim();
      if (path.toLowerCase().startsWith(`${CORE_USER.toLowerCase()}:`)) path = path.slice(CORE_USER.length + 1);
      path = attribute + path.slice(attribute.length);
      const value = attribute === 'active' && op !== 'remove' ? activeOf(operation.value) : operation.value;
      out.push(op === 'remove' ? { op, path } : ({ op, path, value } as ScimPatchOperation));
      continue;
    }
    if (op === 'remove') throw new DomainError('invalid', 'no_target', 'A remove operation needs a path.');
    if (operation.value === null || typeof operation.value !== 'object' || Array.isArray(operation.value)) {
      throw invalidValue('An operation without a path takes an object of attributes as its value.');
    }
    const whole: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(operation.value)) {
      const attribute = attributeOf(key);
      if (!attribute) throw unknownAttribute(key);
      if (READ_ONLY.has(attribute)) throw readOnly(attribute);
      if (attribute === ENTERPRISE) continue;
      if (key.includes('.') && !key.includes(':')) out.push({ op, path: attribute + key.slice(attribute.length), value } as ScimPatchOperation);
      else whole[attribute] = attribute === 'active' ? activeOf(value) : value;
    }
    if (Object.keys(whole).length > 0) out.push({ op, value: whole } as ScimPatchOperation);
  }
  return out;
}

export class ScimUserService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly users: UserService,
  ) {}

  /**
   * The person, locked for a change, when the key may see them with its rights as they are now
   * (lockWithStandingNow); else the same 404 as an unknown id. Returns the authority to write with.
   */
  private async lockVisible(trx: Kysely<Database>, authority: Authority, text: string): Promise<{ current: ScimUserRow; authority: Authority }> {
    const id = resourceId(text);
    if (!id) throw notFound();
    const standing = await lockWithStandingNow(trx, authority, [id]);
    if (!standing.found.has(id)) throw notFound();
    const held = await lockRolesOfUser(trx, id);
    if (lacking(standing.authority, permissionsOfRoles(held)).length > 0) throw notFound();
    return { current: (await findScimUser(trx, id))!, authority: standing.authority };
  }

  /** Makes the person what `desired` says, through the users service (its checks, its audit events). */
  private async save(trx: Kysely<Database>, authority: Authority, origin: Origin, current: ScimUserRow, desired: Desired): Promise<ScimUser> {
    if (emailKey(desired.email) !== emailKey(current.email)) {
      throw new DomainError('invalid', 'mutability', 'userName (the e-mail address) cannot be changed through SCIM: an administrator changes it here.');
    }
    const status = desired.active ? 'active' : 'disabled';
    await this.users.update(
      authority,
      current.id,
      { first_name: desired.firstName, last_name: desired.lastName, ...(status !== current.status ? { status } : {}) },
      origin,
      undefined,
      { trx, statusPermission: PROVISIONING_PERMISSION },
    );
    await this.linkExternalId(trx, authority, origin, current.id, `${desired.firstName} ${desired.lastName}`, desired.externalId);
    return presentScimUser((await findScimUser(trx, current.id))!);
  }

  /** Stores the directory's id of the person; recorded as `identity_linked` when it changes. */
  private async linkExternalId(trx: Kysely<Database>, authority: Authority, origin: Origin, userId: string, label: string, externalId: string | null) {
    const before = (await trx.selectFrom('scim_external_ids').select('external_id').where('user_id', '=', userId).executeTakeFirst())?.external_id ?? null;
    if (before === externalId) return;
    const now = this.deps.clock.now();
    await setExternalId(trx, userId, externalId, now);
    await recordAuditEvent(trx, {
      type: 'identity_linked',
      at: now,
      context: auditContext(authority, origin),
      target: { type: 'user', id: userId, label },
      userId,
      details: { provisioned_by: 'scim' },
      changes: { before: { external_id: before }, after: { external_id: externalId } },
    });
  }

  async get(authority: Authority, text: string): Promise<ScimUser> {
    const id = resourceId(text);
    if (!id) throw notFound();
    return this.deps.db.transaction().execute(async (trx) => {
      const row = await findScimUser(trx, id);
      if (!row || lacking(authority, permissionsOfRoles(await rolesOfUser(trx, id))).length > 0) throw notFound();
      return presentScimUser(row);
    });
  }

  async list(authority: Authority, query: { filter?: string; startIndex?: number; count?: number }) {
    const filter = query.filter === undefined ? undefined : parseUserFilter(query.filter);
    const startIndex = query.startIndex ?? 1;
    const count = Math.min(query.count ?? DEFAULT_COUNT, MAX_COUNT);
    const permissions = authority.kind === 'operator' ? new Set<string>(PERMISSIONS) : authority.permissions;
    const { total, rows } = await listScimUsers(this.deps.db, { permissions, filter, offset: startIndex - 1, count });
    return { schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse' as const], totalResults: total, startIndex, itemsPerPage: rows.length, Resources: rows.map(presentScimUser) };
  }

  async create(authority: Authority, sent: ScimUser, origin: Origin): Promise<ScimUser> {
    const desired = desiredOf(sent);
    return this.deps.db.transaction().execute(async (trx) => {
      ({ authority } = await lockWithStandingNow(trx, authority, []));
      // A directory sends no password: the draft has nothing slow to do, so it may run in the transaction.
      const draft = await this.users.draft({ email: desired.email, first_name: desired.firstName, last_name: desired.lastName });
      const { user: created } = await this.users.create(trx, authority, draft, origin);
      if (!desired.active) await this.users.disable(authority, created.id, origin, undefined, { trx });
      await this.linkExternalId(trx, authority, origin, created.id, `${created.first_name} ${created.last_name}`, desired.externalId);
      return presentScimUser((await findScimUser(trx, created.id))!);
    });
  }

  async replace(authority: Authority, id: string, sent: ScimUser, origin: Origin): Promise<ScimUser> {
    return this.deps.db.transaction().execute(async (trx) => {
      const { current, authority: now } = await this.lockVisible(trx, authority, id);
      // A PUT without `active` leaves it as it is: a replace of names must not bring back
      // someone an administrator disabled (RFC 7644 3.5.1 lets a missing attribute keep its value).
      return this.save(trx, now, origin, current, desiredOf(sent, { active: current.status === 'active' }));
    });
  }

  async patch(authority: Authority, id: string, operations: { op: string; path?: string; value?: unknown }[], origin: Origin): Promise<ScimUser> {
    const normalized = normalizeOperations(operations);
    return this.deps.db.transaction().execute(async (trx) => {
      const { current, authority: now } = await this.lockVisible(trx, authority, id);
      const shown = presentScimUser(current);
      let patched: ScimUser;
      try {
        patched = scimPatch(structuredClone(shown) as never, normalized, { mutateDocument: false, treatMissingAsAdd: true }) as unknown as ScimUser;
      } catch (err) {
        const scimType = (err as { scimType?: string }).scimType;
        const detail = (err as Error).message || 'The PATCH does not apply to this User.';
        if (scimType === 'noTarget') throw new DomainError('invalid', 'no_target', detail);
        if (scimType === 'invalidPath') throw invalidPath(detail);
        throw invalidValue(detail);
      }
      // The result must still be a User of the contract (an added attribute of the wrong type, an unknown one).
      const errors = requestBodyErrors('ScimUser', patched);
      if (errors.length > 0) throw new DomainError('invalid', 'invalid_value', `The PATCH leaves the User invalid: ${errors.map((e) => `${e.location} ${e.message}`).join('; ')}`, { errors });
      return this.save(trx, now, origin, current, desiredOf(patched, { active: current.status === 'active' }));
    });
  }

  /** Deprovisioning: disables the person and ends their sessions (the record stays). */
  async delete(authority: Authority, id: string, origin: Origin): Promise<void> {
    await this.deps.db.transaction().execute(async (trx) => {
      const { current, authority: now } = await this.lockVisible(trx, authority, id);
      await this.users.disable(now, current.id, origin, undefined, { trx });
    });
  }
}
