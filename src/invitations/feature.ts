// Invitations by e-mail.
import type { Dependencies } from '../dependencies.js';
import { invitationService } from './service.js';
import { invitationHandlers } from './handlers.js';

/** Built once, in src/services.ts. */
export const services = (deps: Dependencies) => ({ invitations: invitationService(deps) });

export const handlers = invitationHandlers;
