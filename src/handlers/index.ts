// The handler map: one entry per operationId of the contract, checked by the compiler.
import type { HandlerMap } from '../contract/handler-types.js';
import type { Dependencies } from '../dependencies.js';
import { userHandlers } from './users.js';
import { tokenHandlers } from './tokens.js';
import { sessionHandlers } from './sessions.js';
import { meHandlers } from './me.js';

export function createHandlers(deps: Dependencies): HandlerMap {
  return {
    ...userHandlers(deps),
    ...tokenHandlers(deps),
    ...sessionHandlers(deps),
    ...meHandlers(deps),
  };
}
