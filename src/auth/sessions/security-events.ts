// Records security events (sign-in, refresh, reuse, revocation, password change) with time,
// user, IP and user agent. Never a token or a password: `details` carries reasons and counts only.
// They are audit events like the changes of rights (src/audit/recorder.ts); this module fills in
// who acted on what for the sign-in and session kinds.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Actor, Target } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';

export type SecurityEventType =
  | 'sign_in_succeeded'
  | 'sign_in_failed'
  | 'sign_in_throttled'
  | 'tokens_refreshed'
  | 'refresh_token_reused'
  | 'session_revoked'
  | 'password_changed';

export interface SecurityEvent {
  type: SecurityEventType;
  at: Date;
  userId: string | null;
  sessionId?: string | null;
  ip: string;
  userAgent: string;
  details?: Record<string, string | number | boolean>;
  /** Who acted, when not the user of the event on their own session (an administrator revoking it). */
  actor?: Actor;
  requestId?: string | null;
}

/** The person themselves, except for failed and throttled sign-ins, whose author is not known. */
function defaultActor(event: SecurityEvent): Actor {
  if (event.type === 'sign_in_failed' || event.type === 'sign_in_throttled' || !event.userId) return { type: 'anonymous' };
  return { type: 'user', userId: event.userId, sessionId: event.sessionId ?? null };
}

/** A session as the audit trail names it: its person's name now. */
export const sessionLabel = (sessionId: string) =>
  sql<string | null>`(select u.first_name || ' ' || u.last_name from sessions s join users u on u.id = s.user_id where s.id = ${sessionId})`;

function targetOf(event: SecurityEvent): Target | null {
  if (event.type !== 'password_changed' && event.sessionId) return { type: 'session', id: event.sessionId, label: sessionLabel(event.sessionId) };
  return event.userId ? { type: 'user', id: event.userId } : null;
}

export async function recordSecurityEvent(db: Kysely<Database> | Transaction<Database>, event: SecurityEvent): Promise<void> {
  await recordAuditEvent(db, {
    type: event.type,
    at: event.at,
    context: { actor: event.actor ?? defaultActor(event), requestId: event.requestId ?? null, ip: event.ip, userAgent: event.userAgent },
    target: targetOf(event),
    userId: event.userId,
    sessionId: event.sessionId ?? null,
    details: event.details ?? {},
  });
}
