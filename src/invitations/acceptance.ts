// Accepting an invitation (src/invitations/service.ts makes them): the person follows the link's
// single-use token, chooses their own password and is signed in. Their account is worth no more
// than the invitation's maker may still grant when it is accepted.
import type { Kysely } from 'kysely';
import type { components } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import { DomainError, invalid } from '../errors.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { digestSecret, isWellFormedSecret } from '../auth/secrets/secrets.js';
import { hashPassword, passwordPolicyViolation } from '../auth/secrets/passwords.js';
import { lockRolesById, setUserRoles } from '../roles/repository.js';
import { permissionsOfRoles } from '../roles/permissions.js';
import { cleanUserText, emailKey, EMAIL_UNIQUE_INDEX } from '../users/names.js';
import { findListedUser, insertUser } from '../users/repository.js';
import { presentUser } from '../users/presenter.js';
import { openSession } from '../auth/sessions/repository.js';
import { sightDevice } from '../auth/sessions/devices.js';
import { keyringOf } from '../auth/secrets/sealing-keys.js';
import { digestToken, newTokenSet, type TokenSet } from '../auth/sessions/tokens.js';
import { truncateUserAgent, type ClientInfo } from '../auth/sessions/revocation.js';
import { emailDigest, throttledAddress } from '../auth/throttle/sign-in-throttle.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { keyPermissionsNow } from '../api-keys/repository.js';
import * as invitations from './repository.js';
import { ssoRequiredProvider } from '../auth/sessions/sso-required.js';
import { emailTaken, INVITATION_TOKEN_PREFIX, ssoRequired } from './service.js';

/** One answer for every token that does not open a pending invitation: unknown, spent, replaced, revoked, expired. */
const invalidInvitation = () => invalid('invalid_invitation', 'This invitation link is unknown, used, replaced, revoked or expired.');

type AcceptInput = components['schemas']['InvitationAcceptRequest'];

/**
 * What the invitation's maker may grant now: an active person's permissions, or a live key's
 * (bounded by its creator's, as always). None for a maker disabled, deleted, revoked or expired.
 */
async function makerPermissionsNow(db: Kysely<Database>, maker: { created_by_user_id: string | null; created_by_api_key_id: string | null }, now: Date): Promise<Set<string>> {
  if (maker.created_by_user_id) return invitations.personPermissionsNow(db, maker.created_by_user_id);
  if (maker.created_by_api_key_id && (await invitations.keyIsLive(db, maker.created_by_api_key_id, now))) return new Set(await keyPermissionsNow(db, maker.created_by_api_key_id));
  return new Set();
}

export class InvitationAcceptance {
  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {}

  /**
   * The person follows the link: their account is made with the invitation's roles, the
   * invitation spent and a session opened, in one transaction. Every token that does not open a
   * pending invitation gets the same answer.
   */
  async accept(input: AcceptInput, client: ClientInfo): Promise<TokenSet> {
    const names = cleanUserText({ first_name: input.first_name, last_name: input.last_name });
    const violation = passwordPolicyViolation(input.password);
    if (violation) throw new DomainError('invalid', 'password_policy', violation, { errors: [{ location: 'request/body/password', message: violation }] });
    // A made-up or mistyped token fails its checksum before any lookup.
    if (!isWellFormedSecret(INVITATION_TOKEN_PREFIX, input.token)) throw invalidInvitation();
    // The password is hashed (the costly part) only for a token that opens a pending invitation;
    // the transaction below checks it again under the row lock.
    const digest = digestSecret(input.token);
    const open = await invitations.findStatusByToken(this.deps.db, digest, this.deps.clock.now());
    if (open !== 'pending') throw invalidInvitation();
    const passwordHash = await hashPassword(input.password);
    return this.deps.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.now();
      const invitation = await invitations.lockInvitationByToken(trx, digest, now);
      if (!invitation || invitation.status !== 'pending') throw invalidInvitation();
      // The domain may have become sso_required since the invitation was sent.
      if (await ssoRequiredProvider(trx, invitation.email)) throw ssoRequired();
      const key = emailKey(invitation.email);
      await invitations.lockAddress(trx, key);
      if (await invitations.userWithAddressExists(trx, key)) throw emailTaken();
      // The roles that still exist (one deleted since the invitation is not granted), locked so that
      // none changes or goes before the grant, and only while its maker could still grant them: an
      // invitation is worth no more than its maker now.
      const roles = await lockRolesById(trx, invitation.role_ids);
      const makerMay = await makerPermissionsNow(trx, invitation, now);
      if ([...permissionsOfRoles(roles)].some((permission) => !makerMay.has(permission)) || !makerMay.has('users.create')) throw invalidInvitation();
      const userId = await translateUniqueViolation(EMAIL_UNIQUE_INDEX, emailTaken, () => insertUser(trx, {
        email: invitation.email,
        first_name: names.first_name,
        last_name: names.last_name,
        password_hash: passwordHash,
        // Chosen by the person: their own.
        must_change_password: false,
        now,
      }));
      await setUserRoles(trx, userId, roles.map((r) => r.id));
      await invitations.markAccepted(trx, invitation.id, userId, now);
      await invitations.forgetMessages(trx, invitation.id);
      const set = newTokenSet();
      const sessionId = await openSession(trx, {
        userId,
        ip: client.ip,
        userAgent: truncateUserAgent(client.userAgent),
        now,
        expiresAt: new Date(now.getTime() + this.deps.config.sessions.lifetimeS * 1000),
        accessDigest: digestToken(set.access_token),
        refreshDigest: digestToken(set.refresh_token),
        emailDigest: emailDigest(invitation.email),
        countedAddress: throttledAddress(client.ip),
        requestId: client.requestId ?? null,
        method: 'password',
        // The person's first device: remembered, no notice (src/auth/sessions/devices.ts).
        device: sightDevice(keyringOf(this.deps.config), client, now),
      });
      const context = { actor: { type: 'user' as const, userId, sessionId }, requestId: client.requestId ?? null, ip: client.ip, userAgent: truncateUserAgent(client.userAgent) };
      const user = (await findListedUser(trx, userId))!;
      await recordAuditEvent(trx, {
        type: 'user_created',
        at: now,
        context,
        target: { type: 'user', id: userId, label: `${names.first_name} ${names.last_name}` },
        userId,
        details: { password_set: true },
        changes: { before: null, after: { email: invitation.email, first_name: names.first_name, last_name: names.last_name, status: 'active', roles: user.roles } },
        publish: { data: presentUser(user) },
      });
      await recordAuditEvent(trx, {
        type: 'invitation_accepted',
        at: now,
        context,
        target: { type: 'invitation', id: invitation.id, label: invitation.email },
        userId,
        changes: { before: { status: 'pending' }, after: { status: 'accepted', user_id: userId } },
      });
      return set;
    });
  }
}
