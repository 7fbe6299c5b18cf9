// The audit events of second factors: enrolments, removals, resets, wrong codes and recovery-code
// uses, recorded in the transaction of the change. Never a key or a code: `details` says which
// method and how many codes remain.
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Actor } from '../../audit/events.js';
import { recordAuditEvent } from '../../audit/recorder.js';

/** The request an event came with (a session operation's ClientInfo fits). */
export interface RequestOrigin {
  ip: string;
  userAgent: string;
  requestId?: string | null;
}

export type SecondFactorEventType =
  | 'second_factor_enrolled'
  | 'second_factor_removed'
  | 'second_factor_failed'
  | 'second_factor_locked'
  | 'recovery_code_used'
  | 'recovery_codes_regenerated'
  | 'session_stepped_up';

export function recordSecondFactorEvent(
  db: Kysely<Database> | Transaction<Database>,
  type: SecondFactorEventType,
  event: { at: Date; userId: string; actor: Actor; client: RequestOrigin | null; details?: Record<string, string | number> },
): Promise<void> {
  return recordAuditEvent(db, {
    type,
    at: event.at,
    context: { actor: event.actor, requestId: event.client?.requestId ?? null, ip: event.client?.ip ?? null, userAgent: event.client?.userAgent ?? null },
    target: { type: 'user', id: event.userId },
    userId: event.userId,
    details: event.details ?? {},
  });
}
