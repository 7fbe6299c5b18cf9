// Companies’ OpenID Providers and signing in with them.
import { identityProviderHandlers } from './handlers.js';

export const handlers = identityProviderHandlers;
