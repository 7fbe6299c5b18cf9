// The handler map: one entry per operationId of the contract, checked by the compiler.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { HandlerMap } from '../contract/handler-types.js';
import { userHandlers } from './users.js';
import { tokenHandlers } from './tokens.js';

export function createHandlers(db: Kysely<Database>): HandlerMap {
  return {
    ...userHandlers(db),
    ...tokenHandlers(),
  };
}
