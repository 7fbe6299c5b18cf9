// Sign-in throttling that stops the attacker without locking the owner out (after Auth0's
// brute-force protection), kept in PostgreSQL so every server process counts the same failures:
//  - the pair (e-mail, client IP) is blocked after N failures in a sliding window: one address
//    guessing one account stops there, while the owner elsewhere is unaffected;
//  - the client IP is blocked after M failures across e-mails (one address spraying accounts);
//  - the account as a whole only slows down: after S failures from any addresses, each attempt
//    must wait 1, 2, 4, ... up to D seconds after the newest failure (a distributed attack gets a
//    guess a minute at most). Addresses the account has signed in from before are not slowed.
// The e-mail is counted whether or not an account has it (stored as a digest). The client IP is
// counted by its network for IPv6 (throttledAddress).
//
// An attempt is recorded when it begins, atomically with the check (the SQL function
// sign_in_attempt_begin, in migration 20261205T1000), and counts as a failure until it succeeds:
// a burst of parallel guesses cannot go past the limit, and a failure costs no further write.
// A successful sign-in clears the failures of its pair (the owner's own typing errors, its own
// attempt among them; not those of other addresses, which still slow the account down) in the
// statement that opens its session (src/auth/sessions/repository.ts), by the attempt's emailDigest and
// countedAddress. Rows older than the window are deleted by the periodic sweep (src/maintenance).
import ipaddr from 'ipaddr.js';
import { sql, type Kysely } from 'kysely';
import { fixedStatement } from '../../db/fixed-statement.js';
import type { Database } from '../../db/schema.js';
import type { UserRow } from '../../users/repository.js';
import { emailKey } from '../../users/names.js';
import { digestSecret } from '../secrets/secrets.js';
import { hasSecondFactor } from '../second-factor.js';

export interface ThrottleLimits {
  /** N: failures of one e-mail from one client IP before that pair is blocked. */
  maxFailuresPerEmailAndIp: number;
  /** M: failures from one client IP, whatever the e-mail, before that IP is blocked. */
  maxFailuresPerIp: number;
  /** S: failures of one e-mail, from every address, before its attempts are spaced out. */
  accountSlowdownAfter: number;
  /** D: the longest spacing of a slowed account's attempts (seconds). */
  accountMaxDelayS: number;
  windowS: number;
}

/** Which count refused an attempt. */
export type ThrottleLimit = 'email_and_ip' | 'ip' | 'account';

/** An e-mail is counted by the key that finds its account (the same digest for any spelling of it). */
export const emailDigest = (email: string) => digestSecret(`email:${emailKey(email)}`);

/**
 * What the throttle counts as one client address: an IPv4 address (also when written as
 * IPv4-mapped IPv6, `::ffff:192.0.2.1`), or the /64 network of an IPv6 address. A subscriber is
 * given a /64 at least (RFC 6177) and may use any of its 2^64 addresses, so counting IPv6
 * addresses one by one would give an attacker a fresh count for every guess. Anything that does
 * not parse as an address (never the case for a socket's) is counted as it is.
 */
export function throttledAddress(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const [a, b, c, d] = (address as ipaddr.IPv6).parts;
  return `${new ipaddr.IPv6([a!, b!, c!, d!, 0, 0, 0, 0]).toString()}/64`;
}

/** The account an e-mail names, as signing in needs it: with a second factor, the password is not enough. */
export type Account = Pick<UserRow, 'id' | 'status' | 'password_hash'> & { has_second_factor: boolean };

export type Attempt =
  /** Refused: seconds until an attempt may go ahead, and which limit refused it. */
  | { locked: true; retryAfter: number; limitedBy: ThrottleLimit; account: Pick<Account, 'id'> | undefined }
  /** Under way: recorded as a failure until `succeeded` (or the sign-in's session) clears it. */
  | { locked: false; attemptId: number; emailDigest: Buffer; countedAddress: string; account: Account | undefined };

/**
 * Begins an attempt and reads the account, in one statement compiled once (see `begin`). `ip` is
 * "known" when the account has a session opened from that very address (sessions are kept for
 * SESSION_RETENTION_DAYS after they end); failures are counted by `counted`, its throttledAddress.
 */
export const beginAttempt = fixedStatement(
  (
    _db,
    p: { address: string; emailDigest: Buffer; ip: string; counted: string; now: Date } & { [K in keyof ThrottleLimits]: number },
  ) => sql<{ attempt_id: number | null; unlocks_at: Date | null; limited_by: ThrottleLimit | null } & Partial<Account>>`
    with u as (select id, status, password_hash, ${hasSecondFactor('users.id')} as has_second_factor from users where email_key = ${p.address})
    select a.attempt_id, a.unlocks_at, a.limited_by, u.id, u.status, u.password_hash, u.has_second_factor
    from sign_in_attempt_begin(
      ${p.emailDigest}, ${p.counted},
      exists (select 1 from sessions s where s.user_id = (select id from u) and s.ip_address = ${p.ip}),
      ${p.now}, ${p.windowS}, ${p.maxFailuresPerEmailAndIp}, ${p.maxFailuresPerIp},
      ${p.accountSlowdownAfter}, ${p.accountMaxDelayS}) a
    left join u on true`,
);

export function signInThrottle(db: Kysely<Database>, limits: ThrottleLimits) {
  return {
    /**
     * Begins an attempt on `email` from `ip`: refused when blocked or slowed, else recorded. In the
     * same round trip, the account the e-mail names (signing in needs it next).
     */
    begin(email: string, ip: string, now: Date): Promise<Attempt> {
      return begin(emailDigest(email), emailKey(email), ip, now);
    },

    /**
     * Begins an attempt counted under `digest`, a key that is no e-mail's (made with another prefix
     * than emailDigest's, so no sign-in with a chosen e-mail adds to its count), from `ip`; reads
     * no account. The OIDC sign-in counts its flows per address this way.
     */
    beginUnder(digest: Buffer, ip: string, now: Date): Promise<Attempt> {
      return begin(digest, '', ip, now); // no account has the empty e-mail key
    },

    /** The attempt succeeded without a sign-in (a password change): it no longer counts. */
    async succeeded(attemptId: number): Promise<void> {
      await db.deleteFrom('sign_in_failures').where('id', '=', attemptId).execute();
    },
  };

  async function begin(digest: Buffer, address: string, ip: string, now: Date): Promise<Attempt> {
    const counted = throttledAddress(ip);
    const [row] = await beginAttempt.execute(db, { ...limits, address, emailDigest: digest, ip, counted, now });
    if (row!.attempt_id === null) {
      const retryAfter = Math.max(1, Math.ceil((row!.unlocks_at!.getTime() - now.getTime()) / 1000));
      return { locked: true, retryAfter, limitedBy: row!.limited_by!, account: row!.id ? { id: row!.id } : undefined };
    }
    const account = row!.id ? { id: row!.id, status: row!.status!, password_hash: row!.password_hash ?? null, has_second_factor: row!.has_second_factor === true } : undefined;
    return { locked: false, attemptId: row!.attempt_id, emailDigest: digest, countedAddress: counted, account };
  }
}

export type SignInThrottle = ReturnType<typeof signInThrottle>;
