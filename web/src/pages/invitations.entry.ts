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

/** Its audit event types: their names in the audit page's filter, and their lines in the journal ({actor}, {target}, {reason}). */
export const auditTypes = {
  invitation_created: { name: { en: 'Invitation sent', fr: 'Invitation envoyée' }, line: { en: '{actor} invited {target}', fr: '{actor} a invité {target}' } },
  invitation_resent: { name: { en: 'Invitation sent again', fr: 'Invitation renvoyée' }, line: { en: '{actor} sent the invitation of {target} again', fr: '{actor} a renvoyé l’invitation de {target}' } },
  invitation_revoked: { name: { en: 'Invitation revoked', fr: 'Invitation révoquée' }, line: { en: '{actor} revoked the invitation of {target}', fr: '{actor} a révoqué l’invitation de {target}' } },
  invitation_accepted: { name: { en: 'Invitation accepted', fr: 'Invitation acceptée' }, line: { en: '{target} accepted their invitation', fr: '{target} a accepté son invitation' } },
} satisfies AuditTypeWording;
