// Sign-in throttling, kept in PostgreSQL so every server process counts the same failures: at most
// N failed attempts per e-mail (known or not) and M per client IP in a sliding window; past that,
// every attempt (the correct password too) answers 429 until the oldest failure leaves the window.
//
// An attempt is recorded when it begins, atomically with the check (the SQL function
// sign_in_attempt_begin, in migration 20261121T1500), and counts as a failure until it succeeds:
// a burst of parallel guesses cannot go past the limit, and a failure costs no further write.
// Rows older than the window are deleted by the periodic sweep (src/maintenance).
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { UserRow } from '../users/repository.js';
import { digestSecret } from '../auth/secrets.js';

export interface ThrottleLimits {
  maxFailuresPerEmail: number;
  maxFailuresPerIp: number;
  windowS: number;
}

export const emailDigest = (email: string) => digestSecret(`email:${email.trim().toLowerCase()}`);

/** The account an e-mail names, as signing in needs it. */
export type Account = Pick<UserRow, 'id' | 'status' | 'password_hash'>;

export type Attempt =
  /** Locked: seconds until an attempt may go ahead. */
  | { locked: true; retryAfter: number }
  /** Under way: recorded as a failure until `succeeded` (or the sign-in's session) clears it. */
  | { locked: false; attemptId: number; account: Account | undefined };

export function signInThrottle(db: Kysely<Database>, limits: ThrottleLimits) {
  return {
    /**
     * Begins an attempt on `email` from `ip`: refused when locked, else recorded. In the same round
     * trip, the account the e-mail names (signing in needs it next; when locked it is not read).
     */
    async begin(email: string, ip: string, now: Date): Promise<Attempt> {
      const { rows } = await sql<{ attempt_id: number | null; unlocks_at: Date | null } & Partial<Account>>`
        select a.attempt_id, a.unlocks_at, u.id, u.status, u.password_hash
        from sign_in_attempt_begin(${emailDigest(email)}, ${ip}, ${now}, ${limits.windowS}, ${limits.maxFailuresPerEmail}, ${limits.maxFailuresPerIp}) a
        left join users u on a.attempt_id is not null and lower(u.email) = ${email.trim().toLowerCase()}`.execute(db);
      const row = rows[0]!;
      if (row.attempt_id === null) {
        return { locked: true, retryAfter: Math.max(1, Math.ceil((row.unlocks_at!.getTime() - now.getTime()) / 1000)) };
      }
      const account = row.id ? { id: row.id, status: row.status!, password_hash: row.password_hash ?? null } : undefined;
      return { locked: false, attemptId: row.attempt_id, account };
    },

    /** The attempt succeeded without a sign-in (a password change): it no longer counts. */
    async succeeded(attemptId: number): Promise<void> {
      await db.deleteFrom('sign_in_failures').where('id', '=', attemptId).execute();
    },
  };
}

/**
 * What a successful sign-in clears: the e-mail's failures (not the IP's), its own attempt among
 * them. Sessions run it in the statement that opens the session, to save a round trip.
 */
export function clearEmailFailures(email: string) {
  return sql`delete from sign_in_failures where email_digest = ${emailDigest(email)}`;
}

export type SignInThrottle = ReturnType<typeof signInThrottle>;
