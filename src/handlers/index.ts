// The handler map: one entry per operationId of the contract, checked by the compiler.
import type { HandlerMap } from '../contract/handler-types.js';
import type { Dependencies } from '../dependencies.js';
import { userHandlers } from './users.js';
import { tokenHandlers } from './tokens.js';
import { roleHandlers } from './roles.js';
import { permissionHandlers } from './permissions.js';
import { apiKeyHandlers } from './api-keys.js';
import { sessionHandlers } from './sessions.js';
import { meHandlers } from './me.js';
import { auditHandlers } from './audit.js';

export function createHandlers(deps: Dependencies): HandlerMap {
  return {
    ...userHandlers(deps),
    ...tokenHandlers(deps),
    ...roleHandlers(deps),
    ...permissionHandlers(),
    ...apiKeyHandlers(deps),
    ...sessionHandlers(deps),
    ...meHandlers(deps),
    ...auditHandlers(deps),
  };
}
