// Refreshing a token set in one round trip. Before, POST /tokens ran BEGIN, six statements and
// COMMIT; `refresh_token_set` makes the same decisions and writes in one call, atomically (a
// statement is its own transaction), with the same lock: the refresh token's row and its
// session's, FOR UPDATE, so concurrent refreshes of one token queue and exactly one rotates.
// Every statement of a VOLATILE function takes a fresh snapshot, and the locking SELECT re-reads
// the rows it waited for, so a caller that queued behind the rotation sees the token used up and
// gets the sealed successor set (docs/AUTH.md).
//
// The caller makes the new token set and seals it before the call (it holds the refresh token the
// seal's key is derived from; the database never sees a token). The events are recorded as
// src/auth/sessions/security-events.ts records them: the user acting on their own session. Outcomes:
//   invalid_refresh_token, invalid_token, session_ended, session_expired: refused, nothing written;
//   issued: the new set is stored, the old refresh token used up, the session a generation on;
//   replayed: the token was used up within the grace window: `successor_sealed` is the set it gave;
//   reused: used up before the window: the session is revoked and the reuse recorded.
/* eslint-disable @typescript-eslint/no-explicit-any */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`
    create function refresh_token_set(
      p_refresh_digest bytea, p_access_digest bytea, p_now timestamptz, p_idle_cutoff timestamptz, p_grace_s double precision,
      p_new_access_digest bytea, p_new_refresh_digest bytea, p_successor_sealed bytea, p_ip text, p_user_agent text, p_request_id text)
    returns table (outcome text, session_id uuid, user_id uuid, successor_sealed bytea)
    language plpgsql volatile as $$
    #variable_conflict use_column
    declare
      r record;
      next_generation integer;
    begin
      select t.id as token_id, t.used_at, t.successor_sealed as sealed, s.id as sid, s.user_id as uid, s.generation,
             s.expires_at, s.last_used_at, s.ended_at, s.revoked_at, u.status as user_status,
             u.first_name || ' ' || u.last_name as user_name
        into r
        from session_tokens t join sessions s on s.id = t.session_id join users u on u.id = s.user_id
        where t.refresh_digest = p_refresh_digest
        for update of s, t;
      if not found then
        outcome := 'invalid_refresh_token';
        return next;
        return;
      end if;
      session_id := r.sid;
      user_id := r.uid;
      if not exists (select 1 from session_tokens a where a.access_digest = p_access_digest and a.session_id = r.sid) then
        outcome := 'invalid_token';
      -- The liveness rule of src/auth/sessions/liveness.ts, told apart: signed out or revoked, or past.
      elsif r.ended_at <= p_now or r.revoked_at <= p_now or r.user_status <> 'active' then
        outcome := 'session_ended';
      elsif r.expires_at <= p_now or r.last_used_at <= p_idle_cutoff then
        outcome := 'session_expired';
      elsif r.used_at is null then
        next_generation := r.generation + 1;
        insert into session_tokens (session_id, generation, access_digest, refresh_digest, issued_at)
          values (r.sid, next_generation, p_new_access_digest, p_new_refresh_digest, p_now);
        update session_tokens set used_at = p_now, successor_sealed = p_successor_sealed where id = r.token_id;
        update sessions set generation = next_generation, refreshed_at = p_now, last_used_at = p_now where id = r.sid;
        insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent, details,
            actor_type, actor_id, actor_session_id, actor_label, target_type, target_id, target_label, request_id)
          values ('tokens_refreshed', p_now, r.uid, r.sid, p_ip, p_user_agent, jsonb_build_object('generation', next_generation),
            'user', r.uid, r.sid, r.user_name, 'session', r.sid, r.user_name, p_request_id);
        outcome := 'issued';
      elsif p_now - r.used_at <= make_interval(secs => p_grace_s) and r.sealed is not null then
        outcome := 'replayed';
        successor_sealed := r.sealed;
      else
        -- A used-up refresh token after the grace window: someone holds a copy. End the session,
        -- as src/auth/sessions/revocation.ts does: the reuse recorded, then the revocation with its event.
        insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent, details,
            actor_type, actor_id, actor_session_id, actor_label, target_type, target_id, target_label, request_id)
          values ('refresh_token_reused', p_now, r.uid, r.sid, p_ip, p_user_agent, '{}',
                  'user', r.uid, r.sid, r.user_name, 'session', r.sid, r.user_name, p_request_id);
        update sessions set revoked_at = p_now, revoked_reason = 'refresh_token_reused'
          where id = r.sid and user_id = r.uid and revoked_at is null and ended_at is null;
        if found then
          insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent, details,
              actor_type, actor_id, actor_session_id, actor_label, target_type, target_id, target_label, request_id)
            values ('session_revoked', p_now, r.uid, r.sid, p_ip, p_user_agent, '{"reason": "refresh_token_reused"}',
                    'user', r.uid, r.sid, r.user_name, 'session', r.sid, r.user_name, p_request_id);
        end if;
        outcome := 'reused';
      end if;
      return next;
    end
    $$`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop function refresh_token_set(bytea, bytea, timestamptz, timestamptz, double precision, bytea, bytea, bytea, text, text, text)`.execute(db);
}
