// The public shape of an audit event (the contract's AuditEvent).
import type { components } from '../../generated/openapi.js';
import type { ListedAuditEvent } from './repository.js';

export type AuditEventResource = components['schemas']['AuditEvent'];

export function presentAuditEvent(e: ListedAuditEvent): AuditEventResource {
  return {
    id: Number(e.id),
    type: e.type as AuditEventResource['type'],
    occurred_at: e.occurred_at,
    actor: { type: e.actor_type as AuditEventResource['actor']['type'], id: e.actor_id, label: e.actor_label, session_id: e.actor_session_id },
    target: e.target_type && e.target_id ? { type: e.target_type as NonNullable<AuditEventResource['target']>['type'], id: e.target_id, label: e.target_label } : null,
    user_id: e.user_id,
    ip_address: e.ip_address,
    user_agent: e.user_agent,
    request_id: e.request_id,
    details: e.details as AuditEventResource['details'],
    changes: e.changes as AuditEventResource['changes'],
  };
}
