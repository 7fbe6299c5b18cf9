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

/** The names of its audit event types in the audit page's filter. */
export const auditTypes = {
  meeting_created: { en: 'Meeting planned', fr: 'Réunion planifiée' },
  meeting_updated: { en: 'Meeting changed', fr: 'Réunion modifiée' },
  meeting_deleted: { en: 'Meeting cancelled', fr: 'Réunion annulée' },
} satisfies AuditTypeWording;
