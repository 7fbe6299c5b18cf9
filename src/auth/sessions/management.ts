// Listing and ending sessions: one's own (signing out, ending another of one's sessions) and, as a
// manager, anyone's whose every permission the manager holds (docs/AUTH.md).
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Dependencies } from '../../dependencies.js';
import type { Actor } from '../../audit/events.js';
import { actorOf } from '../../audit/context.js';
import { lockRolesOfUser } from '../../roles/repository.js';
import { permissionsOfRoles } from '../../roles/permissions.js';
import { lockUserForShare } from '../../users/repository.js';
import { assertMayActOn, isSelf, type Authority } from '../authority.js';
import { livenessAt } from './liveness.js';
import * as repo from './repository.js';
import { revokeSessions, truncateUserAgent, type ClientInfo } from './revocation.js';
import { recordSecurityEvent } from './security-events.js';

export class SessionManagement {
  constructor(private readonly deps: Pick<Dependencies, 'db' | 'clock' | 'config'>) {}

  private liveness() {
    return livenessAt(this.deps.clock.now(), this.deps.config.sessions.idleTimeoutS);
  }

  listOwn(userId: string) {
    return repo.listLiveSessions(this.deps.db, userId, this.liveness());
  }

  /** An administrator's view: undefined when no user has this id (not the same as no session). */
  async listOfUser(userId: string) {
    const [exists, rows] = await Promise.all([repo.userExists(this.deps.db, userId), repo.listLiveSessions(this.deps.db, userId, this.liveness())]);
    return exists ? rows : undefined;
  }

  userExists(userId: string) {
    return repo.userExists(this.deps.db, userId);
  }

  find(sessionId: string) {
    return repo.findLiveSession(this.deps.db, sessionId, this.liveness());
  }

  /** Revokes one session (or all, without sessionId) of a user; false when there was none to revoke. */
  revoke(userId: string, sessionId: string | undefined, client: ClientInfo, reason: string, actor?: Actor): Promise<boolean> {
    const now = this.deps.clock.now();
    return this.deps.db.transaction().execute((trx) => revokeIn(trx, now, userId, sessionId, client, reason, actor));
  }

  /**
   * Revokes one session (or all) of any user, as a manager: ending someone else's sessions needs
   * every permission they hold; one's own sessions may always be ended.
   */
  revokeAsManager(authority: Authority, userId: string, sessionId: string | undefined, client: ClientInfo): Promise<boolean> {
    const self = isSelf(authority, userId);
    const now = this.deps.clock.now();
    return this.deps.db.transaction().execute(async (trx) => {
      if (!self) {
        // Judged in the revoking transaction, on the user and roles locked: a grant of wider rights
        // in progress is waited for, and none starts before the sessions are ended.
        if (!(await lockUserForShare(trx, userId))) return false;
        assertMayActOn(authority, permissionsOfRoles(await lockRolesOfUser(trx, userId)), 'This user');
      }
      return revokeIn(trx, now, userId, sessionId, client, self ? 'revoked_by_user' : 'revoked_by_administrator', actorOf(authority));
    });
  }

  async signOut(userId: string, sessionId: string, client: ClientInfo): Promise<void> {
    const now = this.deps.clock.now();
    await this.deps.db.transaction().execute(async (trx) => {
      if (await repo.endSession(trx, sessionId, now)) {
        const userAgent = truncateUserAgent(client.userAgent);
        await recordSecurityEvent(trx, { type: 'session_revoked', at: now, userId, sessionId, ip: client.ip, requestId: client.requestId, userAgent, details: { reason: 'signed_out' } });
      }
    });
  }
}

/** Revokes one session (or all, without sessionId) of a user, in `trx`; false when there was none to revoke. */
async function revokeIn(trx: Kysely<Database>, now: Date, userId: string, sessionId: string | undefined, client: ClientInfo, reason: string, actor?: Actor) {
  const revoked = await revokeSessions(trx, { userId, ...(sessionId ? { sessionId } : {}) }, reason, now, client, actor);
  return revoked.length > 0;
}
