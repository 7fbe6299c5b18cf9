// The handler map: one entry per operationId of the contract, checked by the compiler.
import type { HandlerMap } from './types.js';
import type { Services } from '../services.js';
import { userHandlers } from './users.js';
import { tokenHandlers } from './tokens.js';
import { roleHandlers } from './roles.js';
import { permissionHandlers } from './permissions.js';
import { apiKeyHandlers } from './api-keys.js';
import { sessionHandlers } from './sessions.js';
import { meHandlers } from './me.js';
import { auditHandlers } from './audit.js';
import { meetingHandlers } from './meetings.js';
import { taskHandlers } from './tasks.js';
import { secondFactorHandlers } from './second-factors.js';
import { webhookHandlers } from './webhooks.js';
import { passkeyHandlers } from './passkeys.js';
import { identityProviderHandlers } from './identity-providers.js';
import { scimHandlers } from './scim.js';

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
    ...secondFactorHandlers(services),
    ...webhookHandlers(services),
    ...passkeyHandlers(services),
    ...identityProviderHandlers(services),
    ...scimHandlers(services),
  };
}
