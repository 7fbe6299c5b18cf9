// Resolves a bearer access token to its principal in ONE database round trip: the token exists and
// is under 600 s old, its session is neither revoked, signed out, past its lifetime nor idle, the
// user is active; the same statement loads the user's permissions (every one for the admin role).
// The session's last use is noted at most once a minute, by a second statement the answer does
// not wait for (as an API key's), so most requests write nothing.
import type { Principal } from '../principal.js';
import type { Dependencies } from '../../dependencies.js';
import { PERMISSIONS } from '../permissions.js';
import { refused } from '../../errors.js';
import { livenessAt } from './liveness.js';
import { ACCESS_TOKEN_TTL_S, digestToken, isAccessToken } from './tokens.js';
import { EVERY_PERMISSION, bearerSession, touchSession } from './repository.js';
import { useNotes } from '../use-notes.js';

const TOUCH_EVERY_MS = 60_000;
/** An administrator's rights: one set for every request of every administrator (a principal's set is read-only). */
const EVERY_PERMISSION_SET: ReadonlySet<string> = new Set(PERMISSIONS);

export function bearerAuthenticator({ db, clock, config, logger }: Dependencies) {
  const refuse = () => refused('invalid_token', 'The access token is unknown, expired or revoked.');
  const noteNow = useNotes(TOUCH_EVERY_MS);
  return async (accessToken: string, _request: { ip: string }): Promise<Principal> => {
    // The checksum rejects made-up and mistyped tokens without touching the database.
    if (!isAccessToken(accessToken)) throw refuse();
    const now = clock.now();
    const touchBefore = new Date(now.getTime() - TOUCH_EVERY_MS);
    const [row] = await bearerSession.execute(db, {
      accessDigest: digestToken(accessToken),
      issuedAfter: new Date(now.getTime() - ACCESS_TOKEN_TTL_S * 1000),
      ...livenessAt(now, config.sessions.idleTimeoutS),
      touchBefore,
      adminsNeedSecondFactor: config.secondFactor.requiredForAdmins,
    });
    if (!row) throw refuse();
    if (row.stale && noteNow(row.session_id, now.getTime())) {
      touchSession.execute(db, { sessionId: row.session_id, now, touchBefore }).catch((err: unknown) =>
        logger.warn({ err: { message: (err as Error).message }, sessionId: row.session_id }, 'could not note the session use'),
      );
    }
    return {
      kind: 'user',
      userId: row.user_id,
      sessionId: row.session_id,
      permissions: row.permissions?.includes(EVERY_PERMISSION) ? EVERY_PERMISSION_SET : new Set(row.permissions),
      passwordChangeRequired: row.must_change_password,
      secondFactorRequired: row.second_factor_missing,
    };
  };
}
