// The registry of features: one line each. A feature's folder holds a `feature.ts` exporting the
// handlers of its operations (`handlers`, given the services it asks for) and, when it has its own,
// the services it builds (`services`, from the dependencies). src/composition.ts builds every
// feature's services once, after the platform's (src/services.ts), and gathers the handlers; the
// compiler checks together they serve every operation of the contract (the French aliases,
// x-path-aliases, are served by their originals').
export * as users from './users/feature.js';
export * as sessions from './auth/sessions/feature.js';
export * as roles from './roles/feature.js';
export * as apiKeys from './api-keys/feature.js';
export * as audit from './audit/feature.js';
export * as meetings from './meetings/feature.js';
export * as tasks from './tasks/feature.js';
export * as invitations from './invitations/feature.js';
export * as passwordResets from './password-resets/feature.js';
export * as mail from './mail/feature.js';
export * as secondFactors from './auth/second-factors/feature.js';
export * as webhooks from './webhooks/feature.js';
export * as identityProviders from './auth/identity-providers/feature.js';
export * as scim from './scim/feature.js';
export * as personalData from './personal-data/feature.js';
export * as erasure from './erasure/feature.js';
export * as emailChanges from './email-changes/feature.js';
