// What an audit event is: the actions recorded, who acted, on what. Shared by the recorder, the
// reader and the sealer; the contract's AuditEvent schema is the public shape of the same thing.
import type { RawBuilder } from 'kysely';
import type { components } from '../../generated/openapi.js';
import { readContract } from '../contract/spec.js';

// The action types, the kinds of actor and the kinds of target are the contract's (AuditEventType,
// AuditActorType, AuditTargetType; its filters use them too): a feature that records a new action
// or target declares it there, once, and a value recorded here that the contract lacks does not
// compile.
type Contract = components['schemas'];
export type AuditEventType = Contract['AuditEventType'];
export type ActorType = Contract['AuditActorType'];
export type TargetType = Contract['AuditTargetType'];

const enumOf = <T>(name: string) => Object.freeze((readContract().components.schemas as Record<string, { enum: T[] }>)[name]!.enum) as readonly T[];
export const AUDIT_EVENT_TYPES = enumOf<AuditEventType>('AuditEventType');
export const ACTOR_TYPES = enumOf<ActorType>('AuditActorType');
export const TARGET_TYPES = enumOf<TargetType>('AuditTargetType');

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

/** A readable name of the target at the time: a value, or a statement of the target's own feature that reads it. */
export type TargetLabel = string | null | RawBuilder<string | null>;

/**
 * What the event is about. Each feature names its own targets (its title, name or URL); the audit
 * trail knows only people (a person's label is their name now, as for actors).
 */
export type Target = { type: 'user'; id: string; label?: TargetLabel } | { type: Exclude<TargetType, 'user'>; id: string; label: TargetLabel };

/** Fields before and after a change; only public fields, never a secret, digest or password. */
export interface Changes {
  before: Record<string, unknown> | null;
  after: Record<string, unknown> | null;
}
