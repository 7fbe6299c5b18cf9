// Sign-in throttling, kept in PostgreSQL so every server process counts the same failures: at most
// N failed attempts per e-mail (known or not) and M per client IP in a sliding window; past that,
// every attempt (the correct password too) answers 429 until the oldest failure leaves the window.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { digestSecret } from '../auth/secrets.js';

export interface ThrottleLimits {
  maxFailuresPerEmail: number;
  maxFailuresPerIp: number;
  windowS: number;
}

export const emailDigest = (email: string) => digestSecret(`email:${email.trim().toLowerCase()}`);

export function signInThrottle(db: Kysely<Database>, limits: ThrottleLimits) {
  const windowMs = limits.windowS * 1000;
  return {
    /** Seconds to wait when locked (null when an attempt may go ahead), and the e-mail's recent failures. One round trip. */
    async check(email: string, ip: string, now: Date): Promise<{ retryAfter: number | null; emailFailures: number }> {
      const since = new Date(now.getTime() - windowMs);
      // The failure whose leaving the window unlocks: the (count - max + 1)-th oldest, i.e. offset max-1 from the newest.
      const { rows } = await sql<{ by_email: Date | null; by_ip: Date | null; email_failures: number }>`
        select
          (select count(*) from sign_in_failures where email_digest = ${emailDigest(email)} and failed_at > ${since}) as email_failures,
          (select failed_at from sign_in_failures where email_digest = ${emailDigest(email)} and failed_at > ${since}
            order by failed_at desc offset ${limits.maxFailuresPerEmail - 1} limit 1) as by_email,
          (select failed_at from sign_in_failures where ip_address = ${ip} and failed_at > ${since}
            order by failed_at desc offset ${limits.maxFailuresPerIp - 1} limit 1) as by_ip`.execute(db);
      const row = rows[0];
      const emailFailures = Number(row?.email_failures ?? 0);
      const unlocks = [row?.by_email, row?.by_ip].filter((d): d is Date => d != null).map((d) => d.getTime() + windowMs);
      if (unlocks.length === 0) return { retryAfter: null, emailFailures };
      return { retryAfter: Math.max(1, Math.ceil((Math.max(...unlocks) - now.getTime()) / 1000)), emailFailures };
    },

    /** Counts a failure, and drops rows that have left the window (in the same statement). */
    async recordFailure(email: string, ip: string, now: Date): Promise<void> {
      const since = new Date(now.getTime() - windowMs);
      await sql`
        with expired as (delete from sign_in_failures where failed_at <= ${since})
        insert into sign_in_failures (email_digest, ip_address, failed_at) values (${emailDigest(email)}, ${ip}, ${now})`.execute(db);
    },

    /** A successful sign-in clears the e-mail's failures (not the IP's). */
    async clearEmail(email: string): Promise<void> {
      await db.deleteFrom('sign_in_failures').where('email_digest', '=', emailDigest(email)).execute();
    },
  };
}

export type SignInThrottle = ReturnType<typeof signInThrottle>;
