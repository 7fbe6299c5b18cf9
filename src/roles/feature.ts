// Roles and the permissions they hold.
import { roleHandlers } from './handlers.js';
import { permissionHandlers } from './permission-handlers.js';

export const handlers = (services: Parameters<typeof roleHandlers>[0]) => ({ ...roleHandlers(services), ...permissionHandlers() });
