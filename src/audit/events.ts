// What an audit event is: the actions recorded, who acted, on what. Shared by the recorder, the
// reader and the sealer; the contract's AuditEvent schema is the public shape of the same thing.
import type { components } from '../../generated/openapi.js';

/** Sign-in and session events (recorded since the sessions issue), changes of rights, and changes of meetings and tasks. */
export const AUDIT_EVENT_TYPES = [
  'sign_in_succeeded',
  'sign_in_failed',
  'sign_in_throttled',
  'tokens_refreshed',
  'refresh_token_reused',
  'session_revoked',
  'password_changed',
  'api_key_created',
  'api_key_updated',
  'api_key_rotated',
  'api_key_revoked',
  'api_key_ip_refused',
  'api_key_leak_reported',
  'role_created',
  'role_updated',
  'role_deleted',
  'user_created',
  'user_updated',
  'user_disabled',
  'meeting_created',
  'meeting_updated',
  'meeting_deleted',
  'task_created',
  'task_updated',
  'task_deleted',
  'second_factor_enrolled',
  'second_factor_removed',
  'second_factor_failed',
  'second_factor_locked',
  'recovery_code_used',
  'recovery_codes_regenerated',
  'second_factors_reset',
  'webhook_endpoint_created',
  'webhook_endpoint_updated',
  'webhook_endpoint_secret_rotated',
  'webhook_endpoint_deleted',
  'webhook_endpoint_disabled',
  'passkey_renamed',
  'session_stepped_up',
  'identity_provider_created',
  'identity_provider_updated',
  'identity_provider_deleted',
  'identity_linked',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export const ACTOR_TYPES = ['user', 'api_key', 'cli', 'system', 'anonymous', 'unknown'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];
export const TARGET_TYPES = ['user', 'role', 'api_key', 'session', 'meeting', 'task', 'webhook_endpoint', 'identity_provider'] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

// The contract lists the same three sets (AuditEventType, AuditActorType, AuditTargetType; its filters use them too): a
// value recorded here that the contract lacks is a 500 on GET /audit-events (response validation),
// so tsc refuses any difference, either way.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Contract = components['schemas'];
export const CONTRACT_AGREES: [
  Same<AuditEventType, Contract['AuditEventType']>,
  Same<ActorType, Contract['AuditActorType']>,
  Same<TargetType, Contract['AuditTargetType']>,
] = [true, true, true];

/**
 * Who did it: a signed-in person (and the session they used), an API key, the operator's command
 * line (with the operating-system account that ran it), or nobody known (a failed sign-in).
 */
export type Actor =
  | { type: 'user'; userId: string; sessionId: string | null }
  | { type: 'api_key'; apiKeyId: string }
  | { type: 'cli'; osUser: string }
  /** The service itself (an endpoint disabled after failing for days). */
  | { type: 'system' }
  | { type: 'anonymous' };

/** Where a change came from: the actor, and the request that carried it (none on the command line). */
export interface AuditContext {
  actor: Actor;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

export interface Target {
  type: TargetType;
  id: string;
  /** A readable name at the time (e-mail, role or key name); looked up when omitted. */
  label?: string | null;
}

/** Fields before and after a change; only public fields, never a secret, digest or password. */
export interface Changes {
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}
