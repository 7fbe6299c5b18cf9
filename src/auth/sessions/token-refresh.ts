// Refreshing a login token set, with rotation and reuse detection (docs/AUTH.md): one round trip
// (repository.ts `refreshTokenSet`) decides whether this caller rotates the set, replays the set a
// concurrent refresh made (two tabs at once, within the grace window), or is refused.
import type { Dependencies } from '../../dependencies.js';
import { refused } from '../../errors.js';
import { uncounted } from '../../outcomes.js';
import { livenessAt } from './liveness.js';
import * as repo from './repository.js';
import { truncateUserAgent, type ClientInfo } from './revocation.js';
import { digestToken, isAccessToken, isRefreshToken, newTokenSet, sealTokenSet, unsealTokenSet, type TokenSet } from './tokens.js';

export class TokenRefresh {
  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config' | 'outcomes'>) {}

  async refresh(accessToken: string, refreshToken: string, client: ClientInfo): Promise<TokenSet> {
    if (!isAccessToken(accessToken)) throw this.refused('invalid_token', 'The access token is malformed.');
    if (!isRefreshToken(refreshToken)) throw this.refused('invalid_refresh_token', 'The refresh token is malformed.');
    const { db, clock, config, outcomes = uncounted } = this.deps;
    const now = clock.now();
    // Made before the call, which stores it only if this caller is the one that rotates: the seal's
    // key comes from the refresh token, which the database never holds. One round trip.
    const set = newTokenSet();
    const [result] = await repo.refreshTokenSet.execute(db, {
      refreshDigest: digestToken(refreshToken),
      accessDigest: digestToken(accessToken),
      now,
      idleCutoff: livenessAt(now, config.sessions.idleTimeoutS).idleCutoff,
      graceS: config.sessions.refreshGraceS,
      newAccessDigest: digestToken(set.access_token),
      newRefreshDigest: digestToken(set.refresh_token),
      successorSealed: sealTokenSet(set, refreshToken),
      ip: client.ip,
      userAgent: truncateUserAgent(client.userAgent),
      requestId: client.requestId ?? null,
    });
    switch (result!.outcome) {
      case 'issued':
        outcomes.refresh('issued');
        return set;
      case 'replayed':
        // Used up within the grace window: the very set the rotation gave (two tabs at once).
        outcomes.refresh('replayed');
        return unsealTokenSet(result!.successor_sealed!, refreshToken);
      case 'invalid_refresh_token':
        throw this.refused('invalid_refresh_token', 'The refresh token is unknown.');
      case 'invalid_token':
        throw this.refused('invalid_token', 'The access token does not belong to the session of the refresh token.');
      case 'session_ended':
        throw this.refused('session_ended', 'The session was signed out or revoked.');
      case 'session_expired':
        throw this.refused('session_expired', 'The session has expired; sign in again.');
      case 'reused':
        // Used up before the grace window: someone holds a copy. The session is revoked.
        outcomes.refresh('reused');
        throw refused('refresh_token_reused', 'This refresh token was already used; the session has been revoked.');
    }
  }

  /** A refresh refused for a bad or dead token (not a reuse), counted as such. */
  private refused(code: string, message: string) {
    (this.deps.outcomes ?? uncounted).refresh('refused');
    return refused(code, message);
  }
}
