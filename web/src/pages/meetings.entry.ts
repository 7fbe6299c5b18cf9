// The meetings page's entry: its link in the navigation and its wording; the page (pages/meetings.tsx) loads when opened.
import type { AuditTypeWording, PageEntry, PermissionWording } from '../page-entry.js';
import { meetingsMessages as messages } from './meetings.messages.js';

export { messages };

export const page = {
  route: 'meetings',
  nav: { section: 'work', order: 20, label: 'meetings.nav', needs: 'meetings.list' },
  module: 'meetings',
} satisfies PageEntry<keyof typeof messages>;

/** What its permissions let their holder do, shown beside their checkboxes. */
export const permissions = {
  'meetings.list': { en: 'See the week of meetings.', fr: 'Voir la semaine de réunions.' },
  'meetings.read': { en: 'Open a meeting.', fr: 'Ouvrir une réunion.' },
  'meetings.create': { en: 'Plan meetings.', fr: 'Planifier des réunions.' },
  'meetings.update': { en: 'Change meetings.', fr: 'Modifier des réunions.' },
  'meetings.delete': { en: 'Cancel meetings.', fr: 'Annuler des réunions.' },
} satisfies PermissionWording;

/** Its audit event types: their names in the audit page's filter, and their lines in the journal ({actor}, {target}, {reason}). */
export const auditTypes = {
  meeting_created: { name: { en: 'Meeting planned', fr: 'Réunion planifiée' }, line: { en: '{actor} planned meeting {target}', fr: '{actor} a planifié la réunion {target}' } },
  meeting_updated: { name: { en: 'Meeting changed', fr: 'Réunion modifiée' }, line: { en: '{actor} changed meeting {target}', fr: '{actor} a modifié la réunion {target}' } },
  meeting_deleted: { name: { en: 'Meeting cancelled', fr: 'Réunion annulée' }, line: { en: '{actor} deleted meeting {target}', fr: '{actor} a supprimé la réunion {target}' } },
} satisfies AuditTypeWording;
