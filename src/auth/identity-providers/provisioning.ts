// Provisioning people from a company's directory: what a sign-in through an identity provider
// does to our people (create one, set the roles its groups map to), written once here so that
// SCIM provisioning (src/scim) does the same through the same functions. Every
// function runs in the caller's transaction and records its audit event there.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AuditContext } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { insertUser } from '../../users/repository.js';
import { cleanUserText } from '../../users/names.js';
import { assertAnotherAdminRemains } from '../authority.js';
import { ADMIN_ROLE_ID } from '../permissions.js';
import { DomainError } from '../../errors.js';

export interface ProvisionedPerson {
  email: string;
  firstName: string;
  lastName: string;
}

/** Where a provisioning came from, for the audit trail (`details.provisioned_by`, `details.provider_id`). */
export interface ProvisioningSource {
  kind: 'oidc' | 'scim';
  providerId: string | null;
}

/**
 * A person's names from what a directory says: given and family names, else the full name split
 * at its last space, else the e-mail's local part. Cut to what our names hold.
 */
export function namesFrom(claims: { given_name?: unknown; family_name?: unknown; name?: unknown }, email: string): { firstName: string; lastName: string } {
  const text = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
  let first = text(claims.given_name);
  let last = text(claims.family_name);
  if (!first && !last) {
    const full = text(claims.name);
    const cut = full.lastIndexOf(' ');
    [first, last] = cut > 0 ? [full.slice(0, cut), full.slice(cut + 1)] : [full, ''];
  }
  if (!first) first = email.slice(0, email.indexOf('@'));
  // Names are 1-100 characters of text: control characters dropped, cut at 100 code points.
  const clean = (s: string) => [...s.replace(/[\u0000-\u001f\u007f\u202a-\u202e\u2066-\u2069]/g, '')].slice(0, 100).join('').trim() || '-';
  return { firstName: clean(first), lastName: clean(last) };
}

/** Creates an active person with no password (they sign in through their directory); `user_created` recorded. */
export async function provisionPerson(
  trx: Kysely<Database>,
  person: ProvisionedPerson,
  source: ProvisioningSource,
  /** Who acts, given the new person's id (a person signing in acts on their own account). */
  contextOf: (userId: string) => AuditContext,
  now: Date,
): Promise<string> {
  const { email, first_name, last_name } = cleanUserText({ email: person.email, first_name: person.firstName, last_name: person.lastName }, 'claims');
  const id = await insertUser(trx, { email, first_name, last_name, password_hash: null, must_change_password: false, now });
  await recordAuditEvent(trx, {
    type: 'user_created',
    at: now,
    context: contextOf(id),
    target: { type: 'user', id, label: `${first_name} ${last_name}` },
    userId: id,
    details: { password_set: false, provisioned_by: source.kind, provider_id: source.providerId },
    changes: { before: null, after: { email, first_name, last_name, status: 'active', roles: [] } },
  });
  return id;
}

/**
 * Sets the roles a directory decides: of the roles `mapped` (every role its groups may grant), the
 * person holds exactly those `granted`; roles mapped by no group (granted here by hand) are left
 * as they are. The last active administrator keeps the admin role (the rule of docs/AUTH.md).
 * The person's row must be locked FOR UPDATE by the caller. Records `user_updated` when the roles changed.
 */
export async function setDirectoryRoles(
  trx: Kysely<Database>,
  userId: string,
  roles: { mapped: ReadonlySet<string>; granted: ReadonlySet<string> },
  source: ProvisioningSource,
  context: AuditContext,
  now: Date,
): Promise<void> {
  const held = (await trx.selectFrom('user_roles').select('role_id').where('user_id', '=', userId).execute()).map((r) => r.role_id);
  const heldSet = new Set(held);
  const add = [...roles.granted].filter((id) => !heldSet.has(id));
  let remove = held.filter((id) => roles.mapped.has(id) && !roles.granted.has(id));
  if (remove.includes(ADMIN_ROLE_ID)) {
    try {
      await assertAnotherAdminRemains(trx, userId);
    } catch (err) {
      if (!(err instanceof DomainError && err.code === 'last_admin')) throw err;
      remove = remove.filter((id) => id !== ADMIN_ROLE_ID);
    }
  }
  if (add.length === 0 && remove.length === 0) return;
  const before = await roleNames(trx, held);
  if (remove.length) await trx.deleteFrom('user_roles').where('user_id', '=', userId).where('role_id', 'in', remove).execute();
  if (add.length) await trx.insertInto('user_roles').values(add.map((role_id) => ({ user_id: userId, role_id }))).execute();
  await trx.updateTable('users').set({ updated_at: now }).where('id', '=', userId).execute();
  const after = await roleNames(trx, [...held.filter((id) => !remove.includes(id)), ...add]);
  await recordAuditEvent(trx, {
    type: 'user_updated',
    at: now,
    context,
    target: { type: 'user', id: userId },
    userId,
    details: { provisioned_by: source.kind, provider_id: source.providerId },
    changes: { before: { roles: before }, after: { roles: after } },
  });
}

async function roleNames(trx: Kysely<Database>, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await trx.selectFrom('roles').select('name').where('id', 'in', ids).execute();
  return rows.map((r) => r.name).sort();
}
