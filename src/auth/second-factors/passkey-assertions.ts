// Checking a passkey when a person signs in (a second step after a password, or alone) or steps up:
// the options offered, their challenges, and the verdict on the browser's answer (an assertion).
// The decisions (challenges good once, user verification, the signature counter, the backup flag,
// the user handle) are src/auth/second-factors/passkeys.ts's, whose registrations made the passkeys.
import {
  generateAuthenticationOptions,
  verifyAuthenticationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
} from '@simplewebauthn/server';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import { conflict } from '../../errors.js';
import * as store from './passkey-store.js';
import type { Person } from './service.js';
import type { RequestOrigin } from './events.js';
import { asJson, keepChallenge, PASSKEY_CHALLENGE_TTL_S, TTL_MS, userHandleOf, type WebAuthnJson } from './passkeys.js';

export type PasskeyRefusal = 'invalid_challenge' | 'unknown_passkey' | 'not_this_person' | 'not_verified' | 'counter_regressed' | 'backup_flags_changed';

/** A passkey's answer checked: its row (locked), or why it was refused (with the row when the passkey is known). */
export type AssertionVerdict =
  | { ok: true; passkey: store.PasskeyRow; signCount: number; backedUp: boolean }
  | { ok: false; reason: PasskeyRefusal; passkey?: store.PasskeyRow };

export class PasskeyAssertions {
  /** The relying party: its id and the origins a browser's answer may come from. */
  private readonly rp: Dependencies['config']['passkeys'];

  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {
    this.rp = deps.config.passkeys;
  }

  /** Request options for a person's passkeys (a second step): its challenge is kept by the caller, with the sign-in challenge. */
  async secondStepOptions(userId: string, on: Kysely<Database> = this.deps.db): Promise<{ options: WebAuthnJson; challenge: string } | undefined> {
    const credentials = await store.credentialsOf(on, userId);
    if (credentials.length === 0) return undefined;
    const options = await generateAuthenticationOptions({
      rpID: this.rp.rpId,
      timeout: TTL_MS,
      userVerification: 'required',
      allowCredentials: credentials.map((c) => ({ id: c.credential_id!, transports: (c.transports ?? []) as AuthenticatorTransport[] })),
    });
    return { options: asJson(options), challenge: options.challenge };
  }

  /**
   * Begins a step-up with a passkey (src/auth/sessions/step-up.ts): options listing the person's
   * passkeys, whose challenge is kept bound to the person and to this session, good once.
   */
  async startStepUp(me: Person, client: RequestOrigin): Promise<{ options: WebAuthnJson; expires_in: number }> {
    const { clock } = this.deps;
    const now = clock.now();
    const own = await this.secondStepOptions(me.userId);
    if (!own) throw conflict('no_passkey', 'You have no passkey; prove it is you with another of your factors.');
    await keepChallenge(this.deps.db, own.challenge, 'step_up', me.userId, client.ip, now, me.sessionId);
    return { options: own.options, expires_in: PASSKEY_CHALLENGE_TTL_S };
  }

  /** Begins a passwordless sign-in: options with no credential listed (the browser offers its discoverable ones). */
  async startSignIn(client: RequestOrigin): Promise<{ options: WebAuthnJson; expires_in: number }> {
    const { clock } = this.deps;
    const now = clock.now();
    const options = await generateAuthenticationOptions({ rpID: this.rp.rpId, timeout: TTL_MS, userVerification: 'required', allowCredentials: [] });
    await keepChallenge(this.deps.db, options.challenge, 'sign_in', null, client.ip, now);
    return { options: asJson(options), expires_in: PASSKEY_CHALLENGE_TTL_S };
  }

  /**
   * Checks a passkey's answer to `expectedChallenge`, in `trx`, with its passkey locked. `userId`:
   * the person it must belong to (a second step); null for a passwordless sign-in, where the user
   * handle must name the passkey's person. Writes nothing: the caller notes the use (noteUse) once
   * it has decided, and records refusals.
   */
  async verifyAssertion(trx: Transaction<Database>, credential: unknown, expectedChallenge: string, userId: string | null): Promise<AssertionVerdict> {
    const response = credential as AuthenticationResponseJSON;
    const credentialId = typeof response?.id === 'string' && response.id.length <= 1366 ? response.id : undefined;
    const passkey = credentialId ? await store.lockPasskeyByCredential(trx, credentialId) : undefined;
    if (!passkey) return { ok: false, reason: 'unknown_passkey' };
    if (userId !== null && passkey.user_id !== userId) return { ok: false, reason: 'not_this_person' };
    if (userId === null && response.response?.userHandle !== Buffer.from(userHandleOf(passkey.user_id)).toString('base64url')) return { ok: false, reason: 'not_verified', passkey };
    const stored = Number(passkey.sign_count ?? 0);
    const verification = await verifyAuthenticationResponse({
      response,
      expectedChallenge,
      expectedOrigin: this.rp.origins,
      expectedRPID: this.rp.rpId,
      requireUserVerification: true,
      // The counter is judged below, on a signature known good, so that a regression is told apart.
      credential: { id: passkey.credential_id!, publicKey: new Uint8Array(passkey.public_key!), counter: 0 },
    }).catch(() => ({ verified: false as const, authenticationInfo: undefined }));
    if (!verification.verified) return { ok: false, reason: 'not_verified', passkey };
    const info = verification.authenticationInfo;
    if ((info.newCounter > 0 || stored > 0) && info.newCounter <= stored) return { ok: false, reason: 'counter_regressed', passkey };
    if ((info.credentialDeviceType === 'multiDevice') !== passkey.backup_eligible) return { ok: false, reason: 'backup_flags_changed', passkey };
    return { ok: true, passkey, signCount: info.newCounter, backedUp: info.credentialBackedUp };
  }

  /** Notes an accepted assertion: its counter and backup state, and the time. */
  noteUse(trx: Transaction<Database>, verdict: Extract<AssertionVerdict, { ok: true }>, now: Date) {
    return store.notePasskeyUse(trx, verdict.passkey.id, verdict.signCount, verdict.backedUp, now);
  }

  /** Uses up a kept challenge, whatever the verdict that follows: whether it was live, undefined when unknown (src/auth/second-factors/passkey-store.ts). */
  takeChallenge(...args: Parameters<typeof store.takeChallenge>) {
    return store.takeChallenge(...args);
  }
}
