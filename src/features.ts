// The registry of features: one line per feature, the handlers of the operations it serves, each
// given only the services it asks for. The compiler checks that together they serve every
// operation of the contract; the aliases (x-path-aliases) are served by their originals' handlers.
import type { HandlerMap } from './http/handler-types.js';
import type { Services } from './services.js';
import { userHandlers } from './users/handlers.js';
import { tokenHandlers } from './auth/sessions/token-handlers.js';
import { roleHandlers } from './roles/handlers.js';
import { permissionHandlers } from './roles/permission-handlers.js';
import { apiKeyHandlers } from './api-keys/handlers.js';
import { sessionHandlers } from './auth/sessions/handlers.js';
import { meHandlers } from './auth/sessions/me-handlers.js';
import { auditHandlers } from './audit/handlers.js';
import { meetingHandlers } from './meetings/handlers.js';
import { taskHandlers } from './tasks/handlers.js';
import { invitationHandlers } from './invitations/handlers.js';
import { passwordResetHandlers } from './password-resets/handlers.js';
import { mailHandlers } from './mail/handlers.js';
import { secondFactorHandlers } from './auth/second-factors/handlers.js';
import { webhookHandlers } from './webhooks/handlers.js';
import { passkeyHandlers } from './auth/second-factors/passkey-handlers.js';
import { identityProviderHandlers } from './auth/identity-providers/handlers.js';
import { scimHandlers } from './scim/handlers.js';
import { personalDataHandlers } from './personal-data/handlers.js';
import { erasureHandlers } from './erasure/handlers.js';

export function createHandlers(services: Services): HandlerMap {
  return {
    ...userHandlers(services),
    ...tokenHandlers(services),
    ...roleHandlers(services),
    ...permissionHandlers(),
    ...apiKeyHandlers(services),
    ...sessionHandlers(services),
    ...meHandlers(services),
    ...auditHandlers(services),
    ...meetingHandlers(services),
    ...taskHandlers(services),
    ...invitationHandlers(services),
    ...passwordResetHandlers(services),
    ...mailHandlers(services),
    ...secondFactorHandlers(services),
    ...webhookHandlers(services),
    ...passkeyHandlers(services),
    ...identityProviderHandlers(services),
    ...scimHandlers(services),
    ...personalDataHandlers(services),
    ...erasureHandlers(services),
  };
}
