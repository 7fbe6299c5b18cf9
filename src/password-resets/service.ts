// Password recovery by e-mail (docs/MAIL.md, after OWASP's Forgot Password cheat sheet):
// - asking (`request`) answers the same, after the same work, whether an account has the address
//   or not: the same statements run (writing nothing for an unknown address), the same token is
//   made and the same message rendered; only the rows written differ. Throttled per address and
//   per client address through the sign-in throttle's counts, before anything is read.
// - the link's token exists only in the message; its SHA-256 digest is stored, valid for
//   PASSWORD_RESET_TTL_MINUTES, spent on use and by any later password change (a trigger).
// - using it (`confirm`) sets the password, spends every other link, ends every session; it does
//   not sign in, so a person with a second factor still needs it at the next sign-in.
// - people whose company signs them in (`sso_required`) have no password of ours: they are told by
//   e-mail to sign in there (the same answer to the request).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Dependencies } from '../dependencies.js';
import type { Principal } from '../auth/principal.js';
import type { Origin } from '../audit/context.js';
import { auditContext } from '../audit/context.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { DomainError, conflict, forbidden, invalid, notFound, rateLimited } from '../errors.js';
import { digestSecret, generateSecret, isWellFormedSecret } from '../auth/secrets/secrets.js';
import { hashPassword, passwordPolicyViolation } from '../auth/secrets/passwords.js';
import { signInThrottle } from '../auth/throttle/sign-in-throttle.js';
import { ssoRequiredProvider } from '../auth/sessions/sso-required.js';
import { revokeSessions, truncateUserAgent, type ClientInfo } from '../auth/sessions/revocation.js';
import { assertMayActOn, isSelf } from '../auth/authority.js';
import { lockRolesOfUser } from '../roles/repository.js';
import { permissionsOfRoles } from '../roles/permissions.js';
import { lockUserForShare } from '../users/repository.js';
import { setPasswordHash } from '../users/credentials.js';
import { emailKey } from '../users/names.js';
import { resourceIdOr } from '../uuid.js';
import { renderMessage, type Language } from '../mail/templates.js';
import { queueMessage } from '../mail/outbox.js';
import * as resets from './repository.js';

/** The prefix of a recovery link's token (`bop_...`): leak scanners and people can tell what it is. */
export const RESET_TOKEN_PREFIX = 'bop';

/** One answer for every token that opens no live link: unknown, used, spent by a change, expired, a disabled account's. */
const invalidReset = () => invalid('invalid_password_reset', 'This recovery link is unknown, used, replaced or expired; ask for a new one.');
const userNotFound = () => notFound('not_found', 'No user has this id.');

/** Where the back office's pages are: the reset page the link opens, and the sign-in page. */
export const resetLink = (origin: string, token: string) => `${origin}/#/password-reset?token=${encodeURIComponent(token)}`;

export class PasswordResetService {
  private readonly backOffice: string;
  private readonly ttlMs: number;
  private readonly throttle: ReturnType<typeof signInThrottle>;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    const { db, config } = deps;
    this.backOffice = config.passkeys.origins[0]!;
    this.ttlMs = config.passwordResets.ttlMinutes * 60_000;
    // The sign-in throttle's counts, under keys no e-mail's sign-in uses: the pair (address, client)
    // is refused after maxPerAddress requests in the window, the client after maxPerIp (its sign-in
    // failures count too), and one address asked from every client together is spaced out after
    // twice maxPerAddress (a victim's mailbox is not flooded from many addresses).
    this.throttle = signInThrottle(db, {
      maxFailuresPerEmailAndIp: config.passwordResets.maxPerAddress,
      maxFailuresPerIp: config.passwordResets.maxPerIp,
      accountSlowdownAfter: config.passwordResets.maxPerAddress * 2,
      accountMaxDelayS: config.signInThrottle.windowS,
      windowS: config.signInThrottle.windowS,
    });
  }

  /** "Forgot your password?": the same answer and the same work for every address. */
  async request(input: { email: string; language?: Language }, client: ClientInfo): Promise<void> {
    const { db, clock } = this.deps;
    const email = input.email.trim();
    const language = input.language ?? 'en';
    const key = emailKey(email);
    const attempt = await this.throttle.beginUnder(digestSecret(`password-reset:${key}`), client.ip, clock.now());
    if (attempt.locked) throw rateLimited(`Too many recovery requests; try again in ${attempt.retryAfter} seconds.`, attempt.retryAfter);
    // Made and rendered for every address, used only for an account that may have a link.
    const token = generateSecret(RESET_TOKEN_PREFIX);
    const digest = digestSecret(token);
    await db.transaction().execute(async (trx) => {
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + this.ttlMs);
      const account = await resets.findAccount(trx, key);
      // The account's own address: the typed one may be another spelling of it (full-width letters)
      // whose domain no provider lists.
      const provider = await ssoRequiredProvider(trx, account?.email ?? email);
      const state = !account ? 'unknown' : account.status !== 'active' ? 'disabled' : provider ? 'sso_required' : 'known';
      const reset = renderMessage('password_reset', language, { link: resetLink(this.backOffice, token), expiresAt, byAdministrator: false });
      const sso = renderMessage('password_reset_sso', language, { provider: provider?.name ?? 'your identity provider', signInLink: `${this.backOffice}/` });
      await resets.writeRequest(trx, {
        userId: account?.id ?? null,
        link: state === 'known' ? { digest, expiresAt, language, requestedBy: null } : null,
        message:
          state === 'known' ? { recipient: account!.email, kind: 'password_reset', language, rendered: reset }
          : state === 'sso_required' ? { recipient: account!.email, kind: 'password_reset_sso', language, rendered: sso }
          : null,
        now,
      });
      await recordAuditEvent(trx, {
        type: 'password_reset_requested',
        at: now,
        context: { actor: { type: 'anonymous' }, requestId: client.requestId ?? null, ip: client.ip, userAgent: truncateUserAgent(client.userAgent) },
        // The label as a value (not the recorder's lookup of the name) so that the statement is
        // the same for an address with no account.
        target: account ? { type: 'user', id: account.id, label: `${account.first_name} ${account.last_name}` } : null,
        userId: account?.id ?? null,
        details: { account: state },
      });
    });
  }

  /** An administrator sends the person a link, within their rights; never sees it. */
  async sendFor(caller: Principal, id: string, language: Language, origin: Origin): Promise<void> {
    const { db, clock } = this.deps;
    const userId = resourceIdOr(id, userNotFound);
    await db.transaction().execute(async (trx) => {
      if (!(await lockUserForShare(trx, userId))) throw userNotFound();
      if (!isSelf(caller, userId)) assertMayActOn(caller, permissionsOfRoles(await lockRolesOfUser(trx, userId)), 'This user');
      const user = (await resets.findUser(trx, userId))!;
      if (user.status !== 'active') throw conflict('user_disabled', 'This user is disabled: a recovery link would open nothing.');
      if (await ssoRequiredProvider(trx, user.email)) throw forbidden('sso_required', "This person signs in with their company's identity provider: they have no password here.");
      const now = clock.now();
      const expiresAt = new Date(now.getTime() + this.ttlMs);
      const token = generateSecret(RESET_TOKEN_PREFIX);
      await this.writeLink(trx, { userId, email: user.email, token, expiresAt, language, requestedBy: caller.kind === 'user' ? caller.userId : null, now });
      await recordAuditEvent(trx, {
        type: 'password_reset_requested',
        at: now,
        context: auditContext(caller, origin),
        target: { type: 'user', id: userId },
        userId,
        details: { by_administrator: true },
      });
    });
  }

  /** Sets the password through a link: spends every link of the person, ends every session, signs nobody in. */
  async confirm(input: { token: string; new_password: string }, client: ClientInfo): Promise<void> {
    const { db, clock } = this.deps;
    const violation = passwordPolicyViolation(input.new_password);
    if (violation) throw new DomainError('invalid', 'password_rejected', violation, { errors: [{ location: 'request/body/new_password', message: violation }] });
    // A made-up or mistyped token fails its checksum before any lookup; the password is hashed
    // (the costly part) only for a token that opens a live link, checked again under its lock.
    if (!isWellFormedSecret(RESET_TOKEN_PREFIX, input.token)) throw invalidReset();
    const digest = digestSecret(input.token);
    const found = await resets.findLiveReset(db, digest, clock.now());
    if (!found) throw invalidReset();
    const passwordHash = await hashPassword(input.new_password);
    await db.transaction().execute(async (trx) => {
      const now = clock.now();
      // The person's row first, then their link, then their sessions: the lock order of every
      // change of a person (docs/AUTH.md). An erasure or an address change locks the person and
      // then, itself or by trigger, their links; taking the link first would deadlock with them.
      // The link (whose person never changes) is found above unlocked, and checked live again
      // under its lock once the person's row is held: a change that spent it meanwhile wins.
      const user = await resets.lockUser(trx, found.user_id);
      const reset = await resets.lockLiveReset(trx, digest, now);
      if (!reset || reset.user_id !== found.user_id) throw invalidReset();
      if (!user || user.status !== 'active' || (await ssoRequiredProvider(trx, user.email))) throw invalidReset();
      await setPasswordHash(trx, user.id, passwordHash, now, { chosenByUser: true });
      await resets.spendAll(trx, user.id, now);
      const actor = { type: 'user' as const, userId: user.id, sessionId: null };
      const revoked = await revokeSessions(trx, { userId: user.id }, 'password_reset', now, client, actor);
      await recordAuditEvent(trx, {
        type: 'password_reset_completed',
        at: now,
        context: { actor, requestId: client.requestId ?? null, ip: client.ip, userAgent: truncateUserAgent(client.userAgent) },
        target: { type: 'user', id: user.id },
        userId: user.id,
        details: { sessions_revoked: revoked.length },
      });
      // The person is told, in the language of the link they followed.
      await queueMessage(trx, { recipient: user.email, kind: 'password_changed', language: reset.language, values: { at: now, through: 'reset' }, userId: user.id, now });
    });
  }

  private async writeLink(trx: Kysely<Database>, v: { userId: string; email: string; token: string; expiresAt: Date; language: Language; requestedBy: string | null; now: Date }) {
    await resets.writeRequest(trx, {
      userId: v.userId,
      link: { digest: digestSecret(v.token), expiresAt: v.expiresAt, language: v.language, requestedBy: v.requestedBy },
      message: { recipient: v.email, kind: 'password_reset', language: v.language, rendered: renderMessage('password_reset', v.language, { link: resetLink(this.backOffice, v.token), expiresAt: v.expiresAt, byAdministrator: true }) },
      now: v.now,
    });
  }
}
