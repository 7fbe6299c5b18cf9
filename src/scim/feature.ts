// SCIM 2.0 provisioning.
import { scimHandlers } from './handlers.js';

export const handlers = scimHandlers;
