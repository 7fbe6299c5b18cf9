// The LISTEN/NOTIFY channels the service uses, named once for the writers and the listeners.

/** Wakes the webhook delivery workers (src/webhooks/worker.ts): every event committed sends one, and every delivery made. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';
