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

/** The rule as SQL, on the sessions table under `alias`: true while the session is live at `at.now`. */
export function sessionIsLive(alias: string, at: Liveness): RawBuilder<boolean> {
  const column = (name: string) => sql.ref(`${alias}.${name}`);
  return sql<boolean>`(
    (${column('ended_at')} is null or ${column('ended_at')} > ${at.now})
    and (${column('revoked_at')} is null or ${column('revoked_at')} > ${at.now})
    and ${column('expires_at')} > ${at.now} and ${column('last_used_at')} > ${at.idleCutoff})`;
}
