// Partner API keys.
import { apiKeyHandlers } from './handlers.js';

export const handlers = apiKeyHandlers;
