// Invitations: an administrator invites a person by e-mail with roles, within their own rights (as
// for POST /users); the person follows a single-use link, chooses their own password and is signed
// in (src/invitations/acceptance.ts). The link's token is generated here, put in the message
// written in the same transaction (the outbox of mail), and kept only as its digest. Every change
// is written with its audit event in one transaction, on the invitation's row locked FOR UPDATE.
import type { Kysely } from 'kysely';
import type { components, operations } from '../../generated/openapi.js';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import { DomainError, forbidden } from '../errors.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { auditContext, type Origin } from '../audit/context.js';
import { serviceSecret } from '../auth/secrets/service-secrets.js';
import { digestSecret, generateSecret } from '../auth/secrets/secrets.js';
import { assertMayGrant } from '../auth/authority.js';
import { lockRolesById, lockRolesByName, roleNameKey } from '../roles/repository.js';
import { permissionsOfRoles } from '../roles/permissions.js';
import { resourceId } from '../uuid.js';
import { keysetPage } from '../pagination/keyset-page.js';
import { assertPrecondition, type Precondition } from '../revisions/precondition.js';
import { cleanName } from '../text/normalize.js';
import { emailKey } from '../users/names.js';
import { ssoRequiredProvider } from '../auth/sessions/sso-required.js';
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
export const emailTaken = () => new DomainError('conflict', 'email_taken', 'A user already has this e-mail address.');
const invitationPending = () => new DomainError('conflict', 'invitation_pending', 'A pending invitation is already out for this e-mail address; resend or revoke it.');
/**
 * People of a domain whose company signs them in (an `sso_required` identity provider) have no
 * password of ours to choose: no invitation is sent, sent again or accepted for them, whenever
 * the domain became so.
 */
export const ssoRequired = () => forbidden('sso_required', "People of this e-mail domain sign in with their company's identity provider; they need no invitation.");
const notPending = (status: string) => new DomainError('conflict', 'invitation_not_pending', `This invitation is ${status}, no longer pending.`);

type CreateInput = components['schemas']['InvitationCreateRequest'];
type ListQuery = NonNullable<operations['listInvitations']['parameters']['query']>;

/**
 * The inviter as the message shows it: the invitation's maker, a person's name or the key's name
 * (a resent invitation is still theirs). An erased maker is named by nobody's name: the erasure
 * finds the messages naming them by this, the invitations they made (src/erasure/repository.ts).
 * The person's row is locked FOR KEY SHARE (as the invitation's foreign key locks it on create)
 * until the message is written and committed: their erasure, which locks it FOR UPDATE, comes
 * wholly before (the name read is gone) or after (it finds the message). Called before the
 * invitation's earlier messages are deleted, which the erasure deletes too.
 */
async function inviterName(db: Kysely<Database>, maker: { created_by_user_id: string | null; created_by_api_key_id: string | null }): Promise<string> {
  if (maker.created_by_user_id) {
    const row = await db.selectFrom('users').select(['first_name', 'last_name', 'erased_at']).where('id', '=', maker.created_by_user_id).forKeyShare().executeTakeFirst();
    if (row && row.erased_at === null) return `${row.first_name} ${row.last_name}`;
  } else if (maker.created_by_api_key_id) {
    const row = await db.selectFrom('api_keys').select('name').where('id', '=', maker.created_by_api_key_id).executeTakeFirst();
    if (row) return row.name;
  }
  return 'An administrator';
}

/**
 * An invitation makes an account, whether sent (POST /invitations) or sent again (resend): its
 * sender may make accounts, and so learns no more of which addresses have one (`409 email_taken`)
 * than POST /users tells them. Asked before anything that looks at the address. The roles'
 * permissions are asked beside it (assertMayGrant), once the roles are known.
 */
function assertMayInvite(caller: Principal): void {
  assertMayGrant(caller, ['users.create'], 'an account');
}

const creatorOf = (caller: Principal) =>
  caller.kind === 'user' ? { created_by_user_id: caller.userId, created_by_api_key_id: null } : { created_by_user_id: null, created_by_api_key_id: caller.apiKeyId };

export class InvitationService {
  private readonly cursorKey: ReturnType<typeof serviceSecret>;
  /** The back office the link opens: the first of the origins it is served from. */
  private readonly backOffice: string;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.cursorKey = serviceSecret(deps.db, deps.clock, 'cursor_signing');
    this.backOffice = deps.config.passkeys.origins[0]!;
  }

  async get(id: string) {
    const known = resourceId(id);
    const invitation = known && (await invitations.findListedInvitation(this.deps.db, known, this.deps.clock.now()));
    if (!invitation) throw notFound();
    return invitation;
  }

  async list(query: ListQuery) {
    const limit = query.limit ?? DEFAULT_PAGE_SIZE;
    const after = query.cursor === undefined ? undefined : decodeCursor(await this.cursorKey(), query.cursor);
    const rows = await invitations.listInvitationsPage(this.deps.db, { limit, after, now: this.deps.clock.now() });
    return keysetPage(rows, limit, async (last) => encodeCursor(await this.cursorKey(), { key: last.cursor_key, id: last.id }));
  }

  /** Made in the transaction it is given, which its caller opened and ends. */
  async create(trx: Kysely<Database>, caller: Principal, input: CreateInput, origin: Origin) {
    const email = cleanName(input.email, { location: 'request/body/email', maxLength: 254 });
    const key = emailKey(email);
    const names = input.roles ?? [];
    const days = input.expires_in_days ?? DEFAULT_EXPIRY_DAYS;
    const language = input.language ?? 'en';
    const roles = await lockRolesByName(trx, names);
    const found = new Set(roles.map((r) => r.name_key));
    const missing = names.find((n) => !found.has(roleNameKey(n)));
    if (missing) {
      throw new DomainError('invalid', 'unknown_role', `There is no role named ${missing}.`, { errors: [{ location: 'request/body/roles', message: `unknown role ${missing}` }] });
    }
    assertMayInvite(caller);
    assertMayGrant(caller, permissionsOfRoles(roles), 'a role');
    if (await ssoRequiredProvider(trx, email)) throw ssoRequired();
    await invitations.lockAddress(trx, key);
    const now = this.deps.clock.now();
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
    await this.writeMessage(trx, { invitationId: id, email, language, inviter: await inviterName(trx, creatorOf(caller)), expiresAt, token, now });
    const created = (await invitations.findListedInvitation(trx, id, now))!;
    await recordAuditEvent(trx, {
      type: 'invitation_created',
      at: now,
      context: auditContext(caller, origin),
      target: { type: 'invitation', id, label: email },
      changes: { before: null, after: { email, roles: created.roles, expires_at: created.expires_at, language } },
    });
    return created;
  }

  /** A new link for a pending or expired invitation; the link sent before stops working. */
  async resend(caller: Principal, id: string, origin: Origin) {
    const known = resourceId(id);
    if (!known) throw notFound();
    // Resending revives the invitation, an account to be made: it asks for the rights creating
    // does, the caller's own now, before anything that looks at the address.
    assertMayInvite(caller);
    return this.deps.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.now();
      const invitation = await invitations.lockInvitation(trx, known, now);
      if (!invitation) throw notFound();
      // The roles that still exist, locked: a role changed meanwhile is judged as it then is.
      assertMayGrant(caller, permissionsOfRoles(await lockRolesById(trx, invitation.role_ids)), 'a role');
      if (invitation.status === 'accepted' || invitation.status === 'revoked') throw notPending(invitation.status);
      if (await ssoRequiredProvider(trx, invitation.email)) throw ssoRequired();
      const key = emailKey(invitation.email);
      await invitations.lockAddress(trx, key);
      // Expired, then someone else invited or the person signed up another way.
      if (await invitations.userWithAddressExists(trx, key)) throw emailTaken();
      if (await invitations.hasLiveInvitation(trx, key, now, known)) throw invitationPending();
      const inviter = await inviterName(trx, invitation);
      const token = generateSecret(INVITATION_TOKEN_PREFIX);
      const expiresAt = new Date(now.getTime() + invitation.expires_in_days * DAY_MS);
      await invitations.replaceToken(trx, known, digestSecret(token), expiresAt, now);
      await invitations.forgetMessages(trx, known);
      await this.writeMessage(trx, { invitationId: known, email: invitation.email, language: invitation.language, inviter, expiresAt, token, now });
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
  }

  async revoke(caller: Principal, id: string, origin: Origin, precondition?: Precondition): Promise<void> {
    const known = resourceId(id);
    if (!known) throw notFound();
    await this.deps.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.now();
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
  }

  /** A new link's token, its message written to the outbox; only the digest goes back to be stored. */
  private async writeMessage(trx: Kysely<Database>, v: { invitationId: string | null; email: string; language: 'en' | 'fr'; inviter: string; expiresAt: Date; token: string; now: Date }) {
    await queueMessage(trx, {
      recipient: v.email,
      kind: 'invitation',
      language: v.language,
      values: { link: acceptLink(this.backOffice, v.token), inviter: v.inviter, expiresAt: v.expiresAt },
      invitationId: v.invitationId,
      now: v.now,
    });
  }
}
