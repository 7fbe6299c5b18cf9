// The contract's enums, as web/vite.config.ts serves them from generated/openapi.json at build time.
declare module 'virtual:contract-enums' {
  import type { components } from '../../generated/openapi.js';
  type Schemas = components['schemas'];
  /** Every audit event type, in the contract's order. */
  export const AuditEventType: readonly Schemas['AuditEventType'][];
  /** Every kind of audit target. */
  export const AuditTargetType: readonly Schemas['AuditTargetType'][];
  /** Every event type a webhook endpoint may subscribe to. */
  export const EventType: readonly Schemas['EventType'][];
  /** Every permission. */
  export const Permission: readonly Schemas['Permission'][];
}
