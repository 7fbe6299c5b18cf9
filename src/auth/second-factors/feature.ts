// Second factors and passkeys.
import { secondFactorHandlers } from './handlers.js';
import { passkeyHandlers } from './passkey-handlers.js';

export const handlers = (services: Parameters<typeof secondFactorHandlers>[0] & Parameters<typeof passkeyHandlers>[0]) => ({ ...secondFactorHandlers(services), ...passkeyHandlers(services) });
