// Passkeys (WebAuthn, with @simplewebauthn/server): registering, naming, listing and removing a
// person's passkeys here (PasskeyService), and checking a passkey's answer (an assertion) when it
// signs in, as the second step after a password or alone (passwordless), or steps up
// (PasskeyAssertions, src/auth/second-factors/passkey-assertions.ts). Decisions (docs/AUTH.md#passkeys):
// - Every challenge is made and kept here, in the database (several processes), good once: a
//   registration's and a passwordless sign-in's in passkey_challenges, deleted when an answer
//   names them whatever the verdict; a second step's beside its sign-in challenge, which is
//   itself good once. Short-lived: PASSKEY_CHALLENGE_TTL_S.
// - User verification is required (a PIN or a biometric on the authenticator): with it a passkey
//   is two factors, which is what lets it sign in without a password.
// - A passkey is discoverable (residentKey required): the browser can offer it with no e-mail.
// - The signature counter must move forward when the authenticator keeps one (a synced passkey
//   reports 0, always): a signed answer whose counter does not is a copied authenticator, refused
//   and recorded. The backup-eligible flag is fixed at registration: an answer that changes it is
//   refused; the backup state is kept as last reported.
// - The WebAuthn user handle is the 16 bytes of the person's id: opaque, no personal data.
import {
  generateRegistrationOptions,
  verifyRegistrationResponse,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { decodeClientDataJSON } from '@simplewebauthn/server/helpers';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { conflict, invalid, notFound, rateLimited } from '../../errors.js';
import { throttledAddress } from '../throttle/sign-in-throttle.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { recordSecondFactorEvent, type RequestOrigin } from './events.js';
import { countConfirmedFactors, replaceRecoveryCodes } from './repository.js';
import { cleanName } from '../../text/normalize.js';
import * as store from './passkey-store.js';
import { personActor, type Person } from './service.js';

export const PASSKEY_CHALLENGE_TTL_S = 300;
/** Passkeys one person may hold. */
export const MAX_PASSKEYS = 20;
/**
 * Live challenges (registrations and passwordless sign-ins begun) one client address may hold:
 * beginning a passwordless sign-in needs no credential, so this bounds what a stranger can make the
 * database keep. 50, for an office behind one NAT address. The number's one home: the contract
 * (POST /sessions/passkey/challenge) and docs/AUTH.md say it, test/passkey-challenge-budgets.test.ts
 * checks that they do.
 */
export const MAX_LIVE_CHALLENGES_PER_ADDRESS = 50;
/**
 * Live step-up challenges one session may hold, a budget of their own, apart from the address's:
 * an office signing in behind one NAT address does not block anyone's step-up, and a stolen
 * session beginning step-ups blocks neither the office's sign-ins nor its owner's other sessions.
 * Per session, not per person, for that last reason. 10: a person retrying a cancelled browser
 * dialog a few times within the 5 minutes a challenge lives.
 */
export const MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION = 10;
/** EdDSA, ES256, RS256: what authenticators make. */
const ALGORITHMS = [-8, -7, -257];

/** A passkey's name is read in the person's list and the journal: NFC, trimmed, no controls or bidirectional controls (src/text/normalize.ts). */
const cleanPasskeyName = (name: string) => cleanName(name, { location: 'request/body/name', maxLength: 64 });

export const invalidPasskey = () => invalid('invalid_passkey', "The passkey's answer could not be verified, or its challenge is unknown, expired or used; start again.");

/** The WebAuthn user handle of a person: the 16 bytes of their id. */
export const userHandleOf = (userId: string): Uint8Array<ArrayBuffer> => new Uint8Array(Buffer.from(userId.replace(/-/g, ''), 'hex'));

/** The challenge a browser's answer signed, read from its clientDataJSON; undefined when unreadable. */
export function challengeOf(credential: unknown): string | undefined {
  const clientData = (credential as { response?: { clientDataJSON?: unknown } } | null)?.response?.clientDataJSON;
  if (typeof clientData !== 'string' || clientData.length > 4096) return undefined;
  try {
    const { challenge } = decodeClientDataJSON(clientData);
    return typeof challenge === 'string' && /^[A-Za-z0-9_-]{43}$/.test(challenge) ? challenge : undefined;
  } catch {
    return undefined;
  }
}

/** WebAuthn's JSON, handed to the browser as the library makes it (the contract's keys-not-inflected objects). */
export type WebAuthnJson = Record<string, unknown>;
export const asJson = (options: object): WebAuthnJson => ({ ...options });

/** What a person sees of a passkey (the contract's Passkey). */
export function presentPasskey(row: store.ListedPasskey) {
  return {
    id: row.id,
    name: row.name ?? '',
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at?.toISOString() ?? null,
    backup_eligible: row.backup_eligible ?? false,
    backed_up: row.backup_state ?? false,
  };
}

/** Recovery codes for a first second factor, made by the second-factor service (one home for how codes are made and kept). */
export type NewCodes = (trx: Transaction<Database>, userId: string, now: Date) => Promise<string[]>;

/** A challenge's life, as WebAuthn's `timeout` (milliseconds). */
export const TTL_MS = PASSKEY_CHALLENGE_TTL_S * 1000;

/**
 * Keeps a new challenge; 429 past its budget: a step-up's counted on its session, a registration's
 * or a passwordless sign-in's on the client address.
 */
export async function keepChallenge(db: Kysely<Database>, challenge: string, purpose: 'registration' | 'sign_in' | 'step_up', userId: string | null, ip: string, now: Date, sessionId: string | null = null) {
  const counted = throttledAddress(ip);
  const expiresAt = new Date(now.getTime() + TTL_MS);
  if (purpose === 'step_up') {
    // Counted and kept in one transaction under the session's lock: parallel requests cannot overrun it.
    const row = { challenge, user_id: userId!, session_id: sessionId!, counted_address: counted, created_at: now, expires_at: expiresAt };
    if (!(await db.transaction().execute((trx) => store.putStepUpChallengeWithin(trx, row, MAX_LIVE_STEP_UP_CHALLENGES_PER_SESSION)))) {
      throw rateLimited(`Too many step-ups with a passkey begun on this session; try again in ${PASSKEY_CHALLENGE_TTL_S} seconds.`, PASSKEY_CHALLENGE_TTL_S);
    }
    return;
  }
  // Counted and kept in one transaction under the address's lock, for the same reason.
  const row = { challenge, purpose, user_id: userId, counted_address: counted, created_at: now, expires_at: expiresAt };
  if (!(await db.transaction().execute((trx) => store.putChallengeWithin(trx, row, MAX_LIVE_CHALLENGES_PER_ADDRESS)))) {
    throw rateLimited(`Too many passkey ceremonies begun from this address; try again in ${PASSKEY_CHALLENGE_TTL_S} seconds.`, PASSKEY_CHALLENGE_TTL_S);
  }
}

export class PasskeyService {
  /** The relying party: its id and name, and the origins a browser's answer may come from. */
  private readonly rp: Dependencies['config']['passkeys'];

  constructor(
    private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>,
    private readonly newCodesFor: NewCodes,
  ) {
    this.rp = deps.config.passkeys;
  }

  async startRegistration(me: Person, client: RequestOrigin): Promise<{ options: WebAuthnJson; expires_in: number }> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const existing = await store.credentialsOf(db, me.userId);
    if (existing.length >= MAX_PASSKEYS) throw tooMany();
    const options = await generateRegistrationOptions({
      rpName: this.rp.rpName,
      rpID: this.rp.rpId,
      userName: me.email,
      userDisplayName: me.email,
      userID: userHandleOf(me.userId),
      timeout: TTL_MS,
      attestationType: 'none',
      excludeCredentials: existing.map((c) => ({ id: c.credential_id!, transports: (c.transports ?? []) as AuthenticatorTransport[] })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      supportedAlgorithmIDs: ALGORITHMS,
    });
    await keepChallenge(db, options.challenge, 'registration', me.userId, client.ip, now);
    return { options: asJson(options), expires_in: PASSKEY_CHALLENGE_TTL_S };
  }

  /**
   * Finishes a registration: the browser's answer to one of this person's live challenges, verified,
   * becomes a passkey named `name`. The challenge is used up whatever the verdict. With the first
   * second factor come the recovery codes.
   */
  async register(me: Person, sent: string, credential: unknown, client: RequestOrigin) {
    const { db, clock } = this.deps;
    // Refused before the challenge is taken: bad input uses nothing up.
    const name = cleanPasskeyName(sent);
    const challenge = challengeOf(credential);
    if (!challenge) throw invalidPasskey();
    const now = clock.now();
    const outcome = await db.transaction().execute(async (trx) => {
      if (!(await store.takeChallenge(trx, challenge, 'registration', me.userId, now))?.live) return 'invalid' as const;
      const verification = await verifyRegistrationResponse({
        response: credential as RegistrationResponseJSON,
        expectedChallenge: challenge,
        expectedOrigin: this.rp.origins,
        expectedRPID: this.rp.rpId,
        requireUserVerification: true,
        supportedAlgorithmIDs: ALGORITHMS,
      }).catch(() => ({ verified: false as const }));
      if (!verification.verified) {
        await recordSecondFactorEvent(trx, 'second_factor_failed', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'passkey', during: 'enrolment' } });
        return 'invalid' as const;
      }
      const info = verification.registrationInfo;
      if ((await store.countPasskeys(trx, me.userId)) >= MAX_PASSKEYS) return 'too_many' as const;
      // Asked before this passkey counts: codes come with the first factor only.
      const first = (await countConfirmedFactors(trx, me.userId)) === 0;
      const passkey = await store.insertPasskey(trx, {
        userId: me.userId,
        name,
        credentialId: info.credential.id,
        publicKey: Buffer.from(info.credential.publicKey),
        signCount: info.credential.counter,
        transports: (info.credential.transports ?? []).filter((t) => typeof t === 'string').slice(0, 8),
        backupEligible: info.credentialDeviceType === 'multiDevice',
        backupState: info.credentialBackedUp,
        now,
      });
      if (!passkey) return 'duplicate' as const;
      const codes = first ? await this.newCodesFor(trx, me.userId, now) : [];
      await recordSecondFactorEvent(trx, 'second_factor_enrolled', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'passkey', passkey_id: passkey.id, name } });
      return { passkey: presentPasskey(passkey), recovery_codes: codes };
    });
    if (outcome === 'invalid') throw invalidPasskey();
    if (outcome === 'too_many') throw tooMany();
    if (outcome === 'duplicate') throw conflict('passkey_already_registered', 'This passkey is registered already.');
    return outcome;
  }

  async list(userId: string) {
    return (await store.listPasskeys(this.deps.db, userId)).map(presentPasskey);
  }

  async rename(me: Person, id: string, sent: string, client: RequestOrigin) {
    const { db, clock } = this.deps;
    const name = cleanPasskeyName(sent);
    const now = clock.now();
    const renamed = await db.transaction().execute(async (trx) => {
      const before = await store.lockOwnPasskey(trx, me.userId, id);
      if (!before) return undefined;
      const after = await store.setPasskeyName(trx, id, name);
      if (before.name !== name) {
        await recordAuditEvent(trx, {
          type: 'passkey_renamed',
          at: now,
          context: { actor: personActor(me), requestId: client.requestId ?? null, ip: client.ip, userAgent: client.userAgent },
          target: { type: 'user', id: me.userId },
          userId: me.userId,
          details: { passkey_id: id },
          changes: { before: { name: before.name }, after: { name } },
        });
      }
      return after;
    });
    if (!renamed) throw passkeyNotFound();
    return presentPasskey(renamed);
  }

  /** Removes one of the person's passkeys; the recovery codes go with the last factor. */
  async remove(me: Person, id: string, client: RequestOrigin): Promise<void> {
    const { db, clock } = this.deps;
    const now = clock.now();
    const removed = await db.transaction().execute(async (trx) => {
      const row = await store.deletePasskey(trx, me.userId, id);
      if (!row) return false;
      if ((await countConfirmedFactors(trx, me.userId)) === 0) await replaceRecoveryCodes(trx, me.userId, [], null, now);
      await recordSecondFactorEvent(trx, 'second_factor_removed', { at: now, userId: me.userId, actor: personActor(me), client, details: { method: 'passkey', passkey_id: id, name: row.name ?? '' } });
      return true;
    });
    if (!removed) throw passkeyNotFound();
  }

}

const tooMany = () => conflict('too_many_passkeys', `You hold ${MAX_PASSKEYS} passkeys already; remove one first.`);
const passkeyNotFound = () => notFound('not_found', 'No passkey of yours has this id.');
