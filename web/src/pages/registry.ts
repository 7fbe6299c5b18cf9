// The back office's pages: one line each, in the navigation's order within each section. A page's
// entry (`<page>.entry.ts`) says where its link goes and who sees it, holds its wording, and loads
// the page itself only when it is opened (so the wording can be read without a browser).
export * as home from './home.entry.js';
export * as tasks from './tasks.entry.js';
export * as meetings from './meetings.entry.js';
export * as users from './users.entry.js';
export * as invitations from './invitations.entry.js';
export * as roles from './roles.entry.js';
export * as apiKeys from './api-keys.entry.js';
export * as identityProviders from './identity-providers.entry.js';
export * as webhooks from './webhooks.entry.js';
export * as audit from './audit.entry.js';
export * as sessions from './sessions.entry.js';
export * as security from './security.entry.js';
export * as password from './password.entry.js';
export * as devMailbox from './dev-mailbox.entry.js';
export * as email from './email.entry.js';
