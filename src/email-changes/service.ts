// Changing one's e-mail address (docs/MAIL.md). The new address takes effect only when the link
// sent to it is followed by the same person, signed in: the link proves the mailbox, the session the
// account. Asking needs a fresh proof (the contract's x-step-up), so a stolen access token alone
// cannot move an account to another mailbox and then recover its password there. The old address
// is told once the change is made. People whose company signs them in (`sso_required`, by their
// old or new address) keep the address their identity provider gives them.
import type { Dependencies } from '../dependencies.js';
import type { Origin } from '../audit/context.js';
import { auditContext } from '../audit/context.js';
import { recordAuditEvent } from '../audit/recorder.js';
import type { Principal } from '../auth/principal.js';
import { conflict, forbidden, invalid, rateLimited } from '../errors.js';
import { digestSecret, generateSecret, isWellFormedSecret } from '../auth/secrets/secrets.js';
import { ssoRequiredProvider } from '../auth/sessions/sso-required.js';
import { EMAIL_UNIQUE_INDEX, cleanUserText, emailKey } from '../users/names.js';
import { findListedUser } from '../users/repository.js';
import { presentUser } from '../users/presenter.js';
import { translateUniqueViolation } from '../db/unique-violation.js';
import { queueRendered } from '../mail/outbox.js';
import type { Language } from '../mail/templates.js';
import { changedMessage, confirmationLink, confirmationMessage } from './messages.js';
import * as changes from './repository.js';

/** The prefix of a confirmation link's token (`boe_...`): leak scanners and people can tell what it is. */
export const EMAIL_CHANGE_TOKEN_PREFIX = 'boe';

/** How long a link works. */
export const EMAIL_CHANGE_TTL_MS = 24 * 3600 * 1000;

/** How many changes a person may ask for in an hour: each sends a message to an address they typed. */
export const EMAIL_CHANGES_PER_HOUR = 5;

type Person = Extract<Principal, { kind: 'user' }>;

/** One answer for every token that opens no pending change of this person: unknown, used, replaced, expired, another's. */
const invalidChange = () => invalid('invalid_email_change', 'This link is unknown, used, replaced or expired; ask for a new one.');
const emailTaken = () => conflict('email_taken', 'Another account has this address.');
const ssoRequired = () => forbidden('sso_required', "Your address is given by your company's identity provider: change it there.");

export class EmailChangeService {
  private readonly backOffice: string;

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.backOffice = deps.config.passkeys.origins[0]!;
  }

  /** Sends the link to the new address; the same answer whether another account has it or not. */
  async request(me: Person, input: { email: string; language?: Language }, origin: Origin): Promise<void> {
    const { email } = cleanUserText({ email: input.email });
    const language = input.language ?? 'en';
    const token = generateSecret(EMAIL_CHANGE_TOKEN_PREFIX);
    await this.deps.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.now();
      const person = (await changes.lockPerson(trx, me.userId))!;
      if (person.email_key === emailKey(email)) throw conflict('email_unchanged', 'This is already your address.');
      if ((await ssoRequiredProvider(trx, person.email)) || (await ssoRequiredProvider(trx, email))) throw ssoRequired();
      if ((await changes.countRequestedSince(trx, me.userId, new Date(now.getTime() - 3600_000))) >= EMAIL_CHANGES_PER_HOUR) {
        throw rateLimited('Too many address changes asked for; try again in an hour.', 3600);
      }
      const expiresAt = new Date(now.getTime() + EMAIL_CHANGE_TTL_MS);
      await changes.writeRequest(trx, {
        userId: me.userId,
        newEmail: email,
        digest: digestSecret(token),
        language,
        expiresAt,
        message: { recipient: email, rendered: confirmationMessage(language, { link: confirmationLink(this.backOffice, token), expiresAt }) },
        now,
      });
      await recordAuditEvent(trx, { type: 'email_change_requested', at: now, context: auditContext(me, origin), target: { type: 'user', id: me.userId }, userId: me.userId });
    });
  }

  /** Sets the address the link was sent to, for the person it was sent for; tells the old address. */
  async confirm(me: Person, input: { token: string }, origin: Origin): Promise<void> {
    // A made-up or mistyped token fails its checksum before any lookup.
    if (!isWellFormedSecret(EMAIL_CHANGE_TOKEN_PREFIX, input.token)) throw invalidChange();
    const digest = digestSecret(input.token);
    await this.deps.db.transaction().execute(async (trx) => {
      const now = this.deps.clock.now();
      // The person's row first: the lock order of every change of a person.
      const person = (await changes.lockPerson(trx, me.userId))!;
      const change = await changes.lockLiveChange(trx, digest, now);
      if (!change || change.user_id !== me.userId) throw invalidChange();
      if ((await ssoRequiredProvider(trx, person.email)) || (await ssoRequiredProvider(trx, change.new_email))) throw ssoRequired();
      const key = emailKey(change.new_email);
      if (await changes.isTaken(trx, key, me.userId)) throw emailTaken();
      // An account given the address since the check above (not yet committed then): the index decides.
      await translateUniqueViolation(EMAIL_UNIQUE_INDEX, emailTaken, () => changes.setAddress(trx, me.userId, change.new_email, key, now));
      await recordAuditEvent(trx, {
        type: 'email_changed',
        at: now,
        context: auditContext(me, origin),
        target: { type: 'user', id: me.userId },
        userId: me.userId,
        changes: { before: { email: person.email }, after: { email: change.new_email } },
        // Published as `user.updated` (changed_fields: [email]): partners who mirror people learn the new address.
        publish: { data: presentUser((await findListedUser(trx, me.userId))!) },
      });
      await queueRendered(trx, { recipient: person.email, kind: 'email_changed', language: change.language, rendered: changedMessage(change.language, { newEmail: change.new_email, at: now }), userId: me.userId, now });
    });
  }
}
