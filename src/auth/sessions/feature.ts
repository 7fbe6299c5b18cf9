// Signing in, refreshing tokens, the signed-in person (/me) and their sessions.
import { sessionHandlers } from './handlers.js';
import { tokenHandlers } from './token-handlers.js';
import { meHandlers } from './me-handlers.js';

export const handlers = (services: Parameters<typeof sessionHandlers>[0] & Parameters<typeof tokenHandlers>[0] & Parameters<typeof meHandlers>[0]) => ({ ...sessionHandlers(services), ...tokenHandlers(services), ...meHandlers(services) });
