// Webhook endpoints, their deliveries and the event feed.
import { webhookHandlers } from './handlers.js';

export const handlers = webhookHandlers;
