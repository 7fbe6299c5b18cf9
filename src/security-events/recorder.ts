// Records security events (sign-in, refresh, reuse, revocation, password change) with time,
// user, IP and user agent. Never a token or a password: `details` carries reasons and counts only.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

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
}

export async function recordSecurityEvent(db: Kysely<Database> | Transaction<Database>, event: SecurityEvent): Promise<void> {
  await db
    .insertInto('security_events')
    .values({
      type: event.type,
      occurred_at: event.at,
      user_id: event.userId,
      session_id: event.sessionId ?? null,
      ip_address: event.ip,
      user_agent: event.userAgent,
      details: JSON.stringify(event.details ?? {}),
    })
    .execute();
}
