// When is a session alive: the one rule, read by the bearer authenticator, the session service,
// the repository and the sweeper; refresh_token_set (migration 20261206T1000_refresh_function),
// which decides a refresh inside PostgreSQL on the row it locks, applies it in PL/pgSQL and says
// which end a session met: 'ended' when signed out or revoked, 'expired' when past its lifetime
// or idle. A session is live at an instant until the first of: signed out
// (ended_at), revoked, its absolute expiry, its idle timeout (no use for SESSION_IDLE_TIMEOUT_S).
// Whether its user is active is the authenticator's and the refresh's concern (a disabled user's
// sessions are revoked as they are disabled).
import { sql, type RawBuilder } from 'kysely';

export interface Liveness {
  now: Date;
  /** Sessions unused since before this have idled out. */
  idleCutoff: Date;
}

export function livenessAt(now: Date, idleTimeoutS: number): Liveness {
  return { now, idleCutoff: new Date(now.getTime() - idleTimeoutS * 1000) };
}

/**
 * The rule as SQL, on the sessions table under `alias`: true while the session is live at `at.now`.
 * `least` skips nulls and expires_at is never null, so its value is the first end the session has
 * (signed out, revoked or expiry): the same as "(ended_at is null or ended_at > now) and (revoked_at
 * is null or revoked_at > now) and expires_at > now", with `now` sent once (one parameter to parse
 * instead of three, on every bearer request: bench/statements.ts).
 */
export function sessionIsLive(alias: string, at: Liveness): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`(
    least(${column('ended_at')}, ${column('revoked_at')}, ${column('expires_at')}) > ${at.now}
    and ${column('last_used_at')} > ${at.idleCutoff})`;
}
