// People: their list, record, creation, change and disabling.
import { userHandlers } from './handlers.js';

export const handlers = userHandlers;
