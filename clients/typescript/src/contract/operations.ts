// Derived from generated/openapi.json by scripts/client-contract.ts: do not edit (make client).

/** info.version of the contract this client was built from. */
export const CONTRACT_VERSION = "1.1.0";

/** The operations (method and path template) that take an Idempotency-Key: every create. */
export const IDEMPOTENT_OPERATIONS: ReadonlySet<string> = new Set([
  "POST /users",
  "POST /roles",
  "POST /api-keys",
  "POST /api-keys/{id}/rotate",
  "POST /meetings",
  "POST /reunions",
  "POST /tasks",
  "POST /taches",
  "POST /invitations",
  "POST /webhook-endpoints",
  "POST /points-de-terminaison-webhook",
  "POST /identity-providers",
  "POST /fournisseurs-identite",
]);
