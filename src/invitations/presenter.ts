// The public shape of an invitation: what the contract's Invitation schema allows.
import type { components } from '../../generated/openapi.js';
import type { ListedInvitation } from './repository.js';

export type InvitationResource = components['schemas']['Invitation'];

export function presentInvitation(invitation: ListedInvitation): InvitationResource {
  return {
    id: invitation.id,
    email: invitation.email,
    roles: invitation.roles,
    status: invitation.status,
    expires_at: invitation.expires_at,
    user_id: invitation.user_id,
    created_by: { type: invitation.created_by_type, id: invitation.created_by_id, label: invitation.created_by_label },
    created_at: invitation.created_at,
    updated_at: invitation.updated_at,
    accepted_at: invitation.accepted_at,
  };
}
