// The one way a session is revoked: the row is marked and a `session_revoked` event is written for
// each session, in the caller's transaction. Every revocation (by the user, by a manager, on a
// password change, on refresh-token reuse, on disabling a user) goes through here.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Actor } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';
import { sessionLabel } from './security-events.js';
import * as repo from './repository.js';

/** The request a session operation came with, as the security record keeps it. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
  /** The request's id (as answered in X-Request-Id, never one the client chose), recorded with the events it causes. */
  requestId?: string | null;
}

/** Where a revocation came from: a request, or the command line (no address, no user agent). */
export interface RevocationOrigin {
  ip: string | null;
  userAgent: string | null;
  requestId?: string | null;
}

export const USER_AGENT_MAX_LENGTH = 512;
// Counted in code points; a string of at most `max` UTF-16 units has at most `max` code points, so
// the usual user agent is kept as it is without splitting it into an array of characters.
export const truncateUserAgent = (text: string) =>
  text.length <= USER_AGENT_MAX_LENGTH ? text : [...text].slice(0, USER_AGENT_MAX_LENGTH).join('');

/**
 * Revokes the matching live sessions and records each; returns the ids revoked. `actor` is who
 * acted when not the user on that very session (an administrator, the operator, a password change).
 */
export async function revokeSessions(
  trx: Kysely<Database> | Transaction<Database>,
  where: { userId: string; sessionId?: string; exceptSessionId?: string },
  reason: string,
  at: Date,
  origin: RevocationOrigin,
  actor?: Actor,
): Promise<string[]> {
  const revoked = await repo.revokeSessions(trx, where, at, reason);
  const context = {
    requestId: origin.requestId ?? null,
    ip: origin.ip,
    userAgent: origin.userAgent === null ? null : truncateUserAgent(origin.userAgent),
  };
  for (const sessionId of revoked) {
    await recordAuditEvent(trx, {
      type: 'session_revoked',
      at,
      context: { ...context, actor: actor ?? { type: 'user', userId: where.userId, sessionId } },
      target: { type: 'session', id: sessionId, label: sessionLabel(sessionId) },
      userId: where.userId,
      sessionId,
      details: { reason },
    });
  }
  return revoked;
}
