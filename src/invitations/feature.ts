// Invitations by e-mail.
import type { Dependencies } from '../dependencies.js';
import { InvitationService } from './service.js';
import { InvitationAcceptance } from './acceptance.js';
import { invitationHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ invitations: new InvitationService(deps), invitationAcceptance: new InvitationAcceptance(deps) });

export const handlers = invitationHandlers;
