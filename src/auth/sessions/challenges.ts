// The sign-in challenge between a right password and the second factor: an opaque secret
// (`boc_...`, src/auth/secrets/secrets.ts) of which only the digest is stored, bound to the person, good
// once, for CHALLENGE_TTL_S, and dead after MAX_CHALLENGE_FAILURES wrong codes. After a password it
// keeps the digest of the hash verified: its session opens only while the person's password is
// still that one (a reset or change since makes the second step answer a wrong password). A new sign-in with
// the password makes a new one; old ones die on their own (the sweep deletes them).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { digestSecret, generateSecret, isWellFormedSecret } from '../secrets/secrets.js';

const CHALLENGE_PREFIX = 'boc';
export const CHALLENGE_TTL_S = 300;
export const MAX_CHALLENGE_FAILURES = 5;

type Db = Kysely<Database> | Transaction<Database>;

export type FirstFactor = 'password' | 'oidc';

/**
 * Opens a challenge; `passkeyChallenge`: the WebAuthn challenge a passkey must sign for this second
 * step, if the person has one; `firstFactor`: what the person proved before (their password, or a
 * sign-in at an identity provider); `passwordDigest`: after a password, the digest of the hash it
 * was verified against (src/auth/sessions/repository.ts, passwordDigest).
 */
export async function openChallenge(
  db: Db,
  userId: string,
  now: Date,
  passkeyChallenge: string | null = null,
  firstFactor: FirstFactor = 'password',
  pendingOidc: unknown = null,
  passwordDigest: Buffer | null = null,
): Promise<string> {
  const token = generateSecret(CHALLENGE_PREFIX);
  await db
    .insertInto('sign_in_challenges')
    .values({ token_digest: digestSecret(token), user_id: userId, created_at: now, expires_at: new Date(now.getTime() + CHALLENGE_TTL_S * 1000), passkey_challenge: passkeyChallenge, first_factor: firstFactor, pending_oidc: pendingOidc === null ? null : JSON.stringify(pendingOidc), password_digest: passwordDigest })
    .execute();
  return token;
}

/** A live challenge's id, user, e-mail and passkey challenge; undefined for a malformed, unknown, expired, used or worn-out token. */
export async function findLiveChallenge(db: Db, token: string, now: Date) {
  if (!isWellFormedSecret(CHALLENGE_PREFIX, token)) return undefined;
  return db
    .selectFrom('sign_in_challenges as c')
    .innerJoin('users as u', 'u.id', 'c.user_id')
    .select(['c.id', 'c.user_id', 'u.email', 'c.passkey_challenge', 'c.first_factor', 'c.pending_oidc', 'c.password_digest'])
    .where('c.token_digest', '=', digestSecret(token))
    .where('c.used_at', 'is', null)
    .where('c.expires_at', '>', now)
    .where('c.failures', '<', MAX_CHALLENGE_FAILURES)
    .executeTakeFirst();
}

/** Locks a challenge that is still live: of two requests racing with it, the second sees it used. */
export async function lockLiveChallenge(trx: Transaction<Database>, id: string, now: Date): Promise<boolean> {
  const row = await trx
    .selectFrom('sign_in_challenges')
    .select('id')
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .where('failures', '<', MAX_CHALLENGE_FAILURES)
    .forUpdate()
    .executeTakeFirst();
  return row !== undefined;
}

export async function challengeFailed(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('sign_in_challenges').set((eb) => ({ failures: eb('failures', '+', 1) })).where('id', '=', id).execute();
}

export async function challengeUsed(trx: Transaction<Database>, id: string, now: Date): Promise<void> {
  await trx.updateTable('sign_in_challenges').set({ used_at: now }).where('id', '=', id).execute();
}
