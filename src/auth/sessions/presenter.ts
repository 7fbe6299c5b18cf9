// The public shape of a session: where and when, never a token.
import type { components } from '../../../generated/openapi.js';
import type { SessionRow } from './repository.js';

export type SessionResource = components['schemas']['Session'];

export function presentSession(row: SessionRow, currentSessionId: string | null): SessionResource {
  return {
    id: row.id,
    ip_address: row.ip_address,
    user_agent: row.user_agent,
    created_at: row.created_at.toISOString(),
    last_used_at: row.last_used_at.toISOString(),
    refreshed_at: row.refreshed_at ? row.refreshed_at.toISOString() : null,
    expires_at: row.expires_at.toISOString(),
    authentication_method: row.authentication_method,
    current: row.id === currentSessionId,
  };
}
