// Sign-in throttling made atomic. Before, the count of recent failures and the insert of a new
// one were separate statements, so a burst of parallel guesses all read the same count and went
// past the limit. `sign_in_attempt_begin` counts and records the attempt under two advisory locks
// (one per e-mail digest, one per IP address), so attempts on one e-mail or from one address are
// decided one at a time; an attempt in flight counts as a failure until it succeeds (see
// src/auth/throttle/sign-in-throttle.ts). The function is VOLATILE: each statement in it takes a fresh
// snapshot, so after waiting for a lock it sees the row its predecessor committed.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function sign_in_attempt_begin(
      p_email_digest bytea, p_ip text, p_now timestamptz, p_window_s integer, p_max_per_email integer, p_max_per_ip integer)
    returns table (attempt_id bigint, unlocks_at timestamptz)
    language plpgsql volatile as $$
    declare
      since timestamptz := p_now - make_interval(secs => p_window_s);
      by_email timestamptz;
      by_ip timestamptz;
    begin
      -- Always e-mail first, then IP: one lock of each class, taken in the same order, cannot deadlock.
      perform pg_advisory_xact_lock(1, hashtext(encode(p_email_digest, 'hex')));
      perform pg_advisory_xact_lock(2, hashtext(p_ip));
      -- Locked while the max-th newest failure is in the window; it unlocks when that one leaves.
      select f.failed_at into by_email from sign_in_failures f where f.email_digest = p_email_digest and f.failed_at > since
        order by f.failed_at desc offset p_max_per_email - 1 limit 1;
      select f.failed_at into by_ip from sign_in_failures f where f.ip_address = p_ip and f.failed_at > since
        order by f.failed_at desc offset p_max_per_ip - 1 limit 1;
      unlocks_at := greatest(by_email, by_ip) + make_interval(secs => p_window_s);
      if unlocks_at is null then
        insert into sign_in_failures (email_digest, ip_address, failed_at) values (p_email_digest, p_ip, p_now)
          returning id into attempt_id;
      end if;
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function sign_in_attempt_begin(bytea, text, timestamptz, integer, integer, integer)`.execute(db);
}
