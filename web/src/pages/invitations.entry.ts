// The invitations page's entry: its link in the navigation and its wording; the page (pages/invitations.tsx) loads when opened.
import type { AuditTypeWording, PageEntry, PermissionWording } from '../page-entry.js';
import { invitationsMessages as messages } from './invitations.messages.js';

export { messages };

export const page = {
  route: 'invitations',
  nav: { section: 'people', order: 20, label: 'invitations.nav', needs: 'invitations.manage' },
  module: 'invitations',
} satisfies PageEntry<keyof typeof messages>;

/** What its permissions let their holder do, shown beside their checkboxes. */
export const permissions = {
  'invitations.manage': { en: 'Invite people by e-mail, resend and revoke invitations.', fr: 'Inviter des personnes par e-mail, renvoyer et révoquer des invitations.' },
} satisfies PermissionWording;

/** The names of its audit event types in the audit page's filter. */
export const auditTypes = {
  invitation_created: { en: 'Invitation sent', fr: 'Invitation envoyée' },
  invitation_resent: { en: 'Invitation sent again', fr: 'Invitation renvoyée' },
  invitation_revoked: { en: 'Invitation revoked', fr: 'Invitation révoquée' },
  invitation_accepted: { en: 'Invitation accepted', fr: 'Invitation acceptée' },
} satisfies AuditTypeWording;
