// Erasing a person (GDPR article 17; docs/ERASURE.md says what goes, what stays and why). One
// transaction, in the lock order of every change of someone's rights (docs/AUTH.md): the person's
// row (FOR UPDATE, so a sign-in or a change of theirs waits and then sees the tombstone), their
// roles, the last-administrator lock, then the audit trail's chain lock (so no sealer stamps an
// event between its reading and the scrub), then everything else. The caller acts only on people
// whose rights it holds, never on the last active administrator, never on themselves.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ServiceDeps } from '../dependencies.js';
import { DomainError, conflict } from '../errors.js';
import { assertAnotherAdminRemains, assertMayActOn, isSelf, type Authority } from '../auth/authority.js';
import { lockRolesOfUser } from '../roles/repository.js';
import { includesAdmin, permissionsOfRoles } from '../roles/permissions.js';
import { findListedUser, type ShownUser } from '../users/repository.js';
import { erasePersonalColumns } from '../audit/erasure.js';
import { wholeAddressPattern } from '../text/addresses.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, COMMAND_LINE, type Origin } from '../audit/context.js';
import { resourceIdOr } from '../uuid.js';
import { emailKey } from '../users/names.js';
import { emailDigest } from '../auth/throttle/sign-in-throttle.js';
import * as erasure from './repository.js';

const notFound = () => new DomainError('not_found', 'not_found', 'No user has this id.');

/**
 * The payload with the person taken out: an object that is the person (its `id`) keeps its id and
 * loses what names them; any text holding their address as a whole loses it. Other text is kept
 * as it is: a name is not searched in free text (src/audit/erasure.ts says why).
 */
export function scrubPayload(value: unknown, person: erasure.Person): unknown {
  const address = new RegExp(wholeAddressPattern(person.email), 'gi');
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return v.replace(address, '');
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const entries = Object.entries(v as Record<string, unknown>);
    const isPerson = (v as { id?: unknown }).id === person.id;
    return Object.fromEntries(
      entries.map(([key, inner]) => {
        if (isPerson && key === 'email') return [key, erasure.tombstoneEmail(person.id)];
        if (isPerson && ['first_name', 'last_name', 'label', 'name'].includes(key) && typeof inner === 'string') return [key, ''];
        return [key, walk(inner)];
      }),
    );
  };
  return walk(value);
}

export type Erasure = { user: ShownUser; erased: boolean };

export class ErasureService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Erases the person; the tombstone left. A person already erased is answered as they are,
   * with nothing done (`erased: false`).
   */
  async erase(authority: Authority, id: string, origin: Origin = COMMAND_LINE): Promise<Erasure> {
    const { db } = this.deps;
    id = resourceIdOr(id, notFound);
    const erased = await db.transaction().execute(async (trx) => {
      const person = await erasure.lockPerson(trx, id);
      if (!person) throw notFound();
      if (person.erased_at !== null) return false;
      if (isSelf(authority, id)) throw conflict('self_erasure', 'You cannot erase yourself; another administrator can.');
      const held = await lockRolesOfUser(trx, id);
      assertMayActOn(authority, permissionsOfRoles(held), 'This user');
      if (includesAdmin(held) && person.status === 'active') await assertAnotherAdminRemains(trx, id);
      await this.eraseLocked(trx, authority, person, origin);
      return true;
    });
    return { user: (await findListedUser(db, id))!, erased };
  }

  private async eraseLocked(trx: Kysely<Database>, authority: Authority, person: erasure.Person, origin: Origin) {
    const now = this.deps.clock.now();
    const auditEvents = await erasePersonalColumns(trx, person, now);
    const means = await erasure.deleteSignInMeans(trx, person, emailDigest(person.email));
    const { invitations, messages } = await erasure.deleteInvitationsAndMessages(trx, person);
    const apiKeysRevoked = await erasure.revokeKeysCreatedBy(trx, person.id, now);
    await erasure.deleteKeptAnswers(trx, person);
    const events = await erasure.eventsNaming(trx, person);
    for (const event of events) await erasure.replacePayload(trx, event.id, scrubPayload(event.payload, person) as Record<string, unknown>);
    const tombstone = erasure.tombstoneEmail(person.id);
    await erasure.makeTombstone(trx, person.id, { email: tombstone, key: emailKey(tombstone) }, now);
    // Recorded after the scrub, so it stays: it says that an erasure happened, never who it was.
    await recordAuditEvent(trx, {
      type: 'user_erased',
      at: now,
      context: auditContext(authority, origin),
      target: { type: 'user', id: person.id, label: null },
      userId: person.id,
      details: {
        sessions: means.sessions,
        second_factors: means.second_factors,
        recovery_codes: means.recovery_codes,
        identity_links: means.identity_links,
        scim_ids: means.scim_ids,
        roles: means.roles,
        invitations,
        messages,
        api_keys_revoked: apiKeysRevoked,
        audit_events: auditEvents,
        events: events.length,
      },
      publish: { data: { id: person.id } },
    });
  }
}
