// Invitations: an administrator invites a person by e-mail with roles, within their own rights (as
// for POST /users); the person follows a single-use link, chooses their own password and is signed
// in. The link's token is generated here, put in the message written in the same transaction
// (the outbox of mail), and kept only as its digest. Every change is written with its audit event
// in one transaction, on the invitation's row locked FOR UPDATE.
import type { Kysely } from 'kysely';
import type { components, operations } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { DomainError, forbidden, invalid } from '../errors.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { digestSecret, generateSecret, isWellFormedSecret } from '../auth/secrets/secrets.js';
import { hashPassword, passwordPolicyViolation } from '../auth/secrets/passwords.js';
import { assertMayGrant } from '../auth/authority.js';
import { findRoleById, lockRolesByName, roleNameKey, setUserRoles, type RoleRow } from '../roles/repository.js';
import { permissionsOfRoles } from '../roles/permissions.js';
import { resourceId } from '../uuid.js';
import { keysetPage } from '../pagination/keyset-page.js';
import { sealCreated, type Seal } from '../idempotency/service.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import { cleanName } from '../text/normalize.js';
import { cleanUserText, emailKey } from '../users/names.js';
import { findListedUser, insertUser } from '../users/repository.js';
import { presentUser } from '../users/presenter.js';
import { openSession } from '../auth/sessions/repository.js';
import { sightDevice } from '../auth/sessions/devices.js';
import { keyringOf } from '../auth/secrets/sealing-keys.js';
import { digestToken, newTokenSet, type TokenSet } from '../auth/sessions/tokens.js';
import { truncateUserAgent, type ClientInfo } from '../auth/sessions/revocation.js';
import { emailDigest, throttledAddress } from '../auth/throttle/sign-in-throttle.js';
import { ssoRequiredProvider } from '../auth/sessions/sso-required.js';
import { EMAIL_UNIQUE_INDEX } from '../users/names.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { keyPermissionsNow } from '../api-keys/repository.js';
import * as invitations from './repository.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { acceptLink } from './messages.js';
import { queueMessage } from '../mail/outbox.js';

export const DEFAULT_PAGE_SIZE = 50;
export const DEFAULT_EXPIRY_DAYS = 7;
/** The prefix of an invitation link's token (`boi_...`): leak scanners and people can tell what it is. */
export const INVITATION_TOKEN_PREFIX = 'boi';

const DAY_MS = 24 * 3600 * 1000;

const notFound = () => new DomainError('not_found', 'not_found', 'No invitation has this id.');
const emailTaken = () => new DomainError('conflict', 'email_taken', 'A user already has this e-mail address.');
const invitationPending = () => new DomainError('conflict', 'invitation_pending', 'A pending invitation is already out for this e-mail address; resend or revoke it.');
const notPending = (status: string) => new DomainError('conflict', 'invitation_not_pending', `This invitation is ${status}, no longer pending.`);
/** One answer for every token that does not open a pending invitation: unknown, spent, replaced, revoked, expired. */
const invalidInvitation = () => invalid('invalid_invitation', 'This invitation link is unknown, used, replaced, revoked or expired.');

type CreateInput = components['schemas']['InvitationCreateRequest'];
type AcceptInput = components['schemas']['InvitationAcceptRequest'];
type ListQuery = NonNullable<operations['listInvitations']['parameters']['query']>;

/** The invitation's roles that still exist (a role deleted since is not granted). */
async function rolesStill(db: Kysely<Database>, ids: readonly string[]): Promise<RoleRow[]> {
  const roles: RoleRow[] = [];
  for (const id of ids) {
    const role = await findRoleById(db, id);
    if (role) roles.push(role);
  }
  return roles;
}

/** The caller's name as the message shows it: a person's name, or the key's name. */
async function inviterName(db: Kysely<Database>, caller: Principal): Promise<string> {
  if (caller.kind === 'user') {
    const row = await db.selectFrom('users').select(['first_name', 'last_name']).where('id', '=', caller.userId).executeTakeFirst();
    if (row) return `${row.first_name} ${row.last_name}`;
  } else {
    const row = await db.selectFrom('api_keys').select('name').where('id', '=', caller.apiKeyId).executeTakeFirst();
    if (row) return row.name;
  }
  return 'An administrator';
}

/**
 * What the invitation's maker may grant now: an active person's permissions, or a live key's
 * (bounded by its creator's, as always). None for a maker disabled, deleted, revoked or expired.
 */
async function makerPermissionsNow(db: Kysely<Database>, maker: { created_by_user_id: string | null; created_by_api_key_id: string | null }, now: Date): Promise<Set<string>> {
  if (maker.created_by_user_id) return invitations.personPermissionsNow(db, maker.created_by_user_id);
  if (maker.created_by_api_key_id && (await invitations.keyIsLive(db, maker.created_by_api_key_id, now))) return new Set(await keyPermissionsNow(db, maker.created_by_api_key_id));
  return new Set();
}

export function invitationService({ db, clock, config }: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
  const cursorKey = serviceSecret(db, clock, 'cursor_signing');
  /** The back office the link opens: the first of the origins it is served from. */
  const backOffice = config.passkeys.origins[0]!;
  const { lifetimeS } = config.sessions;
  const keys = keyringOf(config);

  const creatorOf = (caller: Principal) =>
    caller.kind === 'user' ? { created_by_user_id: caller.userId, created_by_api_key_id: null } : { created_by_user_id: null, created_by_api_key_id: caller.apiKeyId };

  /** A new link's token, its message written to the outbox; only the digest goes back to be stored. */
  async function writeMessage(trx: Kysely<Database>, v: { invitationId: string | null; email: string; language: 'en' | 'fr'; inviter: string; expiresAt: Date; token: string; now: Date }) {
    await queueMessage(trx, {
      recipient: v.email,
      kind: 'invitation',
      language: v.language,
      values: { link: acceptLink(backOffice, v.token), inviter: v.inviter, expiresAt: v.expiresAt },
      invitationId: v.invitationId,
      now: v.now,
    });
  }

  async function get(id: string) {
    const known = resourceId(id);
    const invitation = known && (await invitations.findListedInvitation(db, known, clock.now()));
    if (!invitation) throw notFound();
    return invitation;
  }

  return {
    get,

    async list(query: ListQuery) {
      const limit = query.limit ?? DEFAULT_PAGE_SIZE;
      const after = query.cursor === undefined ? undefined : decodeCursor(await cursorKey(), query.cursor);
      const rows = await invitations.listInvitationsPage(db, { limit, after, now: clock.now() });
      return keysetPage(rows, limit, async (last) => encodeCursor(await cursorKey(), { key: last.cursor_key, id: last.id }));
    },

    /** `seal` (an Idempotency-Key's) runs last in the transaction, with the invitation as created. */
    async create(caller: Principal, input: CreateInput, origin: Origin, seal?: Seal<invitations.ShownInvitation>) {
      const email = cleanName(input.email, { location: 'request/body/email', maxLength: 254 });
      const key = emailKey(email);
      const names = input.roles ?? [];
      const days = input.expires_in_days ?? DEFAULT_EXPIRY_DAYS;
      const language = input.language ?? 'en';
      return db.transaction().execute(async (trx) => {
        const roles = await lockRolesByName(trx, names);
        const found = new Set(roles.map((r) => r.name_key));
        const missing = names.find((n) => !found.has(roleNameKey(n)));
        if (missing) {
          throw new DomainError('invalid', 'unknown_role', `There is no role named ${missing}.`, { errors: [{ location: 'request/body/roles', message: `unknown role ${missing}` }] });
        }
        // An invitation makes an account: its maker may make accounts (and so learns no more of
        // which addresses have one than POST /users tells them), and grants no right they lack.
        assertMayGrant(caller, ['users.create'], 'an account');
        assertMayGrant(caller, permissionsOfRoles(roles), 'a role');
        // People of a domain whose company signs them in have no password of ours to choose.
        if (await ssoRequiredProvider(trx, email)) throw forbidden('sso_required', 'People of this e-mail domain sign in with their company\'s identity provider; they need no invitation.');
        await invitations.lockAddress(trx, key);
        const now = clock.now();
        if (await invitations.userWithAddressExists(trx, key)) throw emailTaken();
        if (await invitations.hasLiveInvitation(trx, key, now)) throw invitationPending();
        const token = generateSecret(INVITATION_TOKEN_PREFIX);
        const expiresAt = new Date(now.getTime() + days * DAY_MS);
        const id = await invitations.insertInvitation(trx, {
          email,
          email_key: key,
          role_ids: roles.map((r) => r.id),
          language,
          token_digest: digestSecret(token),
          expires_in_days: days,
          expires_at: expiresAt,
          ...creatorOf(caller),
          now,
        });
        await writeMessage(trx, { invitationId: id, email, language, inviter: await inviterName(trx, caller), expiresAt, token, now });
        const created = (await invitations.findListedInvitation(trx, id, now))!;
        await recordAuditEvent(trx, {
          type: 'invitation_created',
          at: now,
          context: auditContext(caller, origin),
          target: { type: 'invitation', id, label: email },
          changes: { before: null, after: { email, roles: created.roles, expires_at: created.expires_at, language } },
        });
        await sealCreated(trx, seal, async () => created);
        return created;
      });
    },

    /** A new link for a pending or expired invitation; the link sent before stops working. */
    async resend(caller: Principal, id: string, origin: Origin) {
      const known = resourceId(id);
      if (!known) throw notFound();
      return db.transaction().execute(async (trx) => {
        const now = clock.now();
        const invitation = await invitations.lockInvitation(trx, known, now);
        if (!invitation) throw notFound();
        if (invitation.status === 'accepted' || invitation.status === 'revoked') throw notPending(invitation.status);
        const key = emailKey(invitation.email);
        await invitations.lockAddress(trx, key);
        // Expired, then someone else invited or the person signed up another way.
        if (await invitations.userWithAddressExists(trx, key)) throw emailTaken();
        if (await invitations.hasLiveInvitation(trx, key, now, known)) throw invitationPending();
        // Resending asks for the same rights again: the caller must still be able to grant them.
        assertMayGrant(caller, permissionsOfRoles(await rolesStill(trx, invitation.role_ids)), 'a role');
        const token = generateSecret(INVITATION_TOKEN_PREFIX);
        const expiresAt = new Date(now.getTime() + invitation.expires_in_days * DAY_MS);
        await invitations.replaceToken(trx, known, digestSecret(token), expiresAt, now);
        await invitations.forgetMessages(trx, known);
        await writeMessage(trx, { invitationId: known, email: invitation.email, language: invitation.language, inviter: await inviterName(trx, caller), expiresAt, token, now });
        const resent = (await invitations.findListedInvitation(trx, known, now))!;
        await recordAuditEvent(trx, {
          type: 'invitation_resent',
          at: now,
          context: auditContext(caller, origin),
          target: { type: 'invitation', id: known, label: invitation.email },
          changes: { before: { status: invitation.status }, after: { status: 'pending', expires_at: resent.expires_at } },
        });
        return resent;
      });
    },

    async revoke(caller: Principal, id: string, origin: Origin, precondition?: Precondition): Promise<void> {
      const known = resourceId(id);
      if (!known) throw notFound();
      await db.transaction().execute(async (trx) => {
        const now = clock.now();
        const invitation = await invitations.lockInvitation(trx, known, now);
        if (!invitation) throw notFound();
        if (precondition) assertPrecondition(precondition, (await invitations.findInvitationRevision(trx, known, now))!);
        if (invitation.status !== 'pending') throw notPending(invitation.status);
        await invitations.markRevoked(trx, known, now);
        await invitations.forgetMessages(trx, known);
        await recordAuditEvent(trx, {
          type: 'invitation_revoked',
          at: now,
          context: auditContext(caller, origin),
          target: { type: 'invitation', id: known, label: invitation.email },
          changes: { before: { status: 'pending' }, after: { status: 'revoked' } },
        });
      });
    },

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
      const open = await invitations.findStatusByToken(db, digest, clock.now());
      if (open !== 'pending') throw invalidInvitation();
      const passwordHash = await hashPassword(input.password);
      return db.transaction().execute(async (trx) => {
        const now = clock.now();
        const invitation = await invitations.lockInvitationByToken(trx, digest, now);
        if (!invitation || invitation.status !== 'pending') throw invalidInvitation();
        const key = emailKey(invitation.email);
        await invitations.lockAddress(trx, key);
        if (await invitations.userWithAddressExists(trx, key)) throw emailTaken();
        // The roles that still exist (one deleted since the invitation is not granted), and only
        // while its maker could still grant them: an invitation is worth no more than its maker now.
        const roles = await rolesStill(trx, invitation.role_ids);
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
          expiresAt: new Date(now.getTime() + lifetimeS * 1000),
          accessDigest: digestToken(set.access_token),
          refreshDigest: digestToken(set.refresh_token),
          emailDigest: emailDigest(invitation.email),
          countedAddress: throttledAddress(client.ip),
          requestId: client.requestId ?? null,
          method: 'password',
          // The person's first device: remembered, no notice (src/auth/sessions/devices.ts).
          device: sightDevice(keys, client, now),
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
    },
  };
}

