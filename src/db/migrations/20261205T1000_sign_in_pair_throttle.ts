// Sign-in throttling that targets the attacker, not the account (after Auth0's brute-force
// protection). Before, N failures on an e-mail from anywhere locked the account, so anyone could
// lock anyone out. Now `sign_in_attempt_begin` decides on three counts, under the same two
// advisory locks as before (e-mail, then IP), in the same atomic step:
//  - the pair (e-mail, client IP): blocked after p_max_per_pair failures in the window;
//  - the client IP across e-mails: blocked after p_max_per_ip failures in the window;
//  - the account as a whole only slows down: from p_slowdown_after failures in the window (from
//    every address), each attempt must come 1, 2, 4, ... up to p_max_delay_s seconds after the
//    newest failure. An address the account has signed in from before (p_known_address) is not
//    slowed: a distributed attack never keeps the owner out of their own address.
// `limited_by` names the count that refused the attempt, for the security event. No new index: the
// pair's rows are found through the e-mail's (an account holds few failures in a window, since
// each address is blocked after a few and the account slows down after a few more).
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';
import { up as createEmailThrottleFunction } from './20261121T1500_sign_in_attempts.js';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop function sign_in_attempt_begin(bytea, text, timestamptz, integer, integer, integer)`.execute(db);
  await sql`
    create function sign_in_attempt_begin(
      p_email_digest bytea, p_ip text, p_known_address boolean, p_now timestamptz, p_window_s integer,
      p_max_per_pair integer, p_max_per_ip integer, p_slowdown_after integer, p_max_delay_s integer)
    returns table (attempt_id bigint, unlocks_at timestamptz, limited_by text)
    language plpgsql volatile as $$
    declare
      since timestamptz := p_now - make_interval(secs => p_window_s);
      by_pair timestamptz;
      by_ip timestamptz;
      by_account timestamptz;
      account_failures integer;
      newest timestamptz;
    begin
      -- Always e-mail first, then IP: one lock of each class, taken in the same order, cannot deadlock.
      perform pg_advisory_xact_lock(1, hashtext(encode(p_email_digest, 'hex')));
      perform pg_advisory_xact_lock(2, hashtext(p_ip));
      -- Blocked while the max-th newest failure is in the window; unblocked when that one leaves.
      select f.failed_at + make_interval(secs => p_window_s) into by_pair from sign_in_failures f
        where f.email_digest = p_email_digest and f.ip_address = p_ip and f.failed_at > since
        order by f.failed_at desc offset p_max_per_pair - 1 limit 1;
      select f.failed_at + make_interval(secs => p_window_s) into by_ip from sign_in_failures f
        where f.ip_address = p_ip and f.failed_at > since
        order by f.failed_at desc offset p_max_per_ip - 1 limit 1;
      if not p_known_address then
        -- Once slowed, the account sees at most one failure per delay, so this count stays small.
        select count(*), max(f.failed_at) into account_failures, newest from sign_in_failures f
          where f.email_digest = p_email_digest and f.failed_at > since;
        if account_failures >= p_slowdown_after then
          by_account := newest + make_interval(secs => least(p_max_delay_s, power(2, least(account_failures - p_slowdown_after, 30))));
          if by_account <= p_now then
            by_account := null;
          end if;
        end if;
      end if;
      unlocks_at := greatest(by_pair, by_ip, by_account);
      if unlocks_at is null then
        insert into sign_in_failures (email_digest, ip_address, failed_at) values (p_email_digest, p_ip, p_now)
          returning id into attempt_id;
      else
        limited_by := case unlocks_at when by_pair then 'email_and_ip' when by_ip then 'ip' else 'account' end;
      end if;
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function sign_in_attempt_begin(bytea, text, boolean, timestamptz, integer, integer, integer, integer, integer)`.execute(db);
  await createEmailThrottleFunction(db);
}
