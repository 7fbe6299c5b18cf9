// The LISTEN/NOTIFY channels the service uses, named once for the writers and the listeners.

/** Wakes the webhook delivery workers (src/webhooks/worker.ts): every event committed sends one, and every delivery made. */
export const DELIVERY_CHANNEL = 'webhook_deliveries';

/**
 * Tells every process which cached API keys to drop (src/api-keys/key-cache.ts): sent by triggers
 * (migration 20270102T1100_api_key_changes) from the statements that change what a key may do, so
 * at their commit. Payloads: `k:<api key id>`, `u:<user id>` (every key that user created),
 * `n` (a secret was added: forget the digests known to be unknown), `all`.
 */
export const API_KEY_CHANGES_CHANNEL = 'api_key_changes';
