// The public shape of an API key: metadata only, never the secret or its digest.
import type { components } from '../../generated/openapi.js';
import type { Permission } from '../auth/permissions.js';
import type { ApiKeyRow } from './repository.js';
import { INTERVAL_OF } from './uses.js';

export type ApiKeyResource = components['schemas']['ApiKey'];

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentApiKey(row: ApiKeyRow): ApiKeyResource {
  return {
    id: row.id,
    name: row.name,
    permissions: row.permissions as Permission[],
    effective_permissions: row.effective_permissions as Permission[],
    display_prefix: row.display_prefix,
    last_characters: row.last_characters,
    created_by: row.created_by,
    creator:
      row.created_by && row.creator_email !== null
        ? { id: row.created_by, email: row.creator_email, first_name: row.creator_first_name ?? '', last_name: row.creator_last_name ?? '', status: row.creator_status ?? 'disabled' }
        : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    expires_at: iso(row.expires_at),
    never_expires: row.expires_at === null,
    last_used_at: iso(row.last_used_at),
    last_used_ip: row.last_used_ip,
    revoked_at: iso(row.revoked_at),
    rate_limit: row.rate_limit_requests === null ? null : { requests: row.rate_limit_requests, per_seconds: row.rate_limit_per_seconds! },
    allowed_ips: row.allowed_ips,
    remaining_uses: row.uses_remaining,
    uses_refill: row.uses_refill_interval === null ? null : { interval: INTERVAL_OF[row.uses_refill_interval], amount: row.uses_refill_amount! },
    metadata: row.metadata,
  };
}
