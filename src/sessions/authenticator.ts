// Resolves a bearer access token to its principal in ONE database round trip: the token exists and
// is under 600 s old, its session is neither revoked, signed out, past its lifetime nor idle, the
// user is active; the same statement loads the user's permissions (every one for the admin role)
// and notes the session's last use (at most once a minute, so most requests write nothing).
import { sql } from 'kysely';
import type { Principal } from '../auth/principal.js';
import type { Dependencies } from '../dependencies.js';
import { ADMIN_ROLE, PERMISSIONS } from '../auth/permissions.js';
import { refused } from '../errors.js';
import { livenessAt, sessionIsLive } from './liveness.js';
import { ACCESS_TOKEN_TTL_S, digestToken, isAccessToken } from './tokens.js';

const TOUCH_EVERY_MS = 60_000;

interface Row {
  session_id: string;
  user_id: string;
  is_admin: boolean;
  permissions: string[];
  must_change_password: boolean;
}

export function bearerAuthenticator({ db, clock, config }: Dependencies) {
  const refuse = () => refused('invalid_token', 'The access token is unknown, expired or revoked.');
  return async (accessToken: string, _request: { ip: string }): Promise<Principal> => {
    // The checksum rejects made-up and mistyped tokens without touching the database.
    if (!isAccessToken(accessToken)) throw refuse();
    const now = clock.now();
    const issuedAfter = new Date(now.getTime() - ACCESS_TOKEN_TTL_S * 1000);
    const touchBefore = new Date(now.getTime() - TOUCH_EVERY_MS);
    const { rows } = await sql<Row>`
      with hit as (
        select s.id as session_id, s.user_id, u.must_change_password
        from session_tokens t
        join sessions s on s.id = t.session_id
        join users u on u.id = s.user_id
        where t.access_digest = ${digestToken(accessToken)}
          and t.issued_at > ${issuedAfter}
          and ${sessionIsLive('s', livenessAt(now, config.sessions.idleTimeoutS))}
          and u.status = 'active'
      ), touch as (
        update sessions set last_used_at = ${now}
        where id = (select session_id from hit) and last_used_at < ${touchBefore}
      )
      select hit.session_id, hit.user_id, hit.must_change_password,
        exists (
          select 1 from user_roles ur join roles r on r.id = ur.role_id
          where ur.user_id = hit.user_id and r.built_in and r.name = ${ADMIN_ROLE}
        ) as is_admin,
        array(
          select distinct rp.permission from user_roles ur join role_permissions rp on rp.role_id = ur.role_id
          where ur.user_id = hit.user_id
        ) as permissions
      from hit`.execute(db);
    const row = rows[0];
    if (!row) throw refuse();
    return {
      kind: 'user',
      userId: row.user_id,
      sessionId: row.session_id,
      permissions: new Set(row.is_admin ? PERMISSIONS : row.permissions),
      passwordChangeRequired: row.must_change_password,
    };
  };
}
