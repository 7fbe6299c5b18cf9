// Handlers of the Invitations operations.
import type { PlatformServices } from '../services.js';
import type { InvitationService } from './service.js';
import type { InvitationAcceptance } from './acceptance.js';
import type { Handler } from '../http/handler-types.js';
import { presentInvitation as present } from './presenter.js';
import type { ShownInvitation } from './repository.js';
import { requireCaller } from '../auth/caller.js';
import { revisionOf } from '../http/entity-tags.js';
import { NO_STORE_TOKENS } from '../http/no-store.js';

/** One invitation, with its revision (the router answers it as the ETag). */
const shown = (invitation: ShownInvitation) => ({ status: 200 as const, body: present(invitation), revision: revisionOf(invitation.id, invitation.revision) });

export function invitationHandlers({ invitations, invitationAcceptance, idempotency }: { invitations: InvitationService; invitationAcceptance: InvitationAcceptance } & Pick<PlatformServices, 'idempotency'>) {
  const listInvitations: Handler<'listInvitations'> = async ({ query }) => {
    const { page, nextCursor } = await invitations.list(query);
    return { status: 200, body: { data: page.map(present), next_cursor: nextCursor } };
  };

  const getInvitation: Handler<'getInvitation'> = async ({ path }) => shown(await invitations.get(path.id));

  const createInvitation: Handler<'createInvitation'> = ({ body, principal, request, idempotency: key }) =>
    idempotency.once(
      key,
      (trx) => invitations.create(trx, requireCaller(principal), body, request),
      (invitation) => ({
        status: 201 as const,
        body: present(invitation),
        headers: { Location: `/invitations/${invitation.id}` },
        revision: revisionOf(invitation.id, invitation.revision),
      }),
    );

  const resendInvitation: Handler<'resendInvitation'> = async ({ path, principal, request }) => shown(await invitations.resend(requireCaller(principal), path.id, request));

  const revokeInvitation: Handler<'revokeInvitation'> = async ({ path, principal, request, precondition }) => {
    await invitations.revoke(requireCaller(principal), path.id, request, precondition);
    return { status: 204, body: undefined };
  };

  const acceptInvitation: Handler<'acceptInvitation'> = async ({ body, request }) => {
    const set = await invitationAcceptance.accept(body, request);
    return { status: 201, body: set, headers: NO_STORE_TOKENS };
  };

  return { listInvitations, getInvitation, createInvitation, resendInvitation, revokeInvitation, acceptInvitation };
}
