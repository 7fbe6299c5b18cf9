// The e-mail address page's entry: its link in the navigation and its wording; the page (pages/email.tsx) loads when opened.
import type { AuditTypeWording, PageEntry, ProblemWording } from '../page-entry.js';
import { emailMessages as messages } from './email.messages.js';

export { messages };

export const page = {
  route: 'email',
  nav: { section: 'account', order: 25, label: 'email.nav', needs: null },
  module: 'email',
} satisfies PageEntry<keyof typeof messages>;

/** Its audit event types: their names in the audit page's filter, and their lines in the journal ({actor}, {target}, {reason}). */
export const auditTypes = {
  email_change_requested: {
    name: { en: 'E-mail change asked for', fr: 'Changement d’e-mail demandé' },
    line: { en: '{actor} asked to change the e-mail address of {target}', fr: '{actor} a demandé à changer l’adresse e-mail de {target}' },
  },
  email_changed: {
    name: { en: 'E-mail address changed', fr: 'Adresse e-mail modifiée' },
    line: { en: '{actor} changed the e-mail address of {target}', fr: '{actor} a modifié l’adresse e-mail de {target}' },
  },
} satisfies AuditTypeWording;

/** The problems of its operations, in words. */
export const problems = {
  email_unchanged: { en: 'This is already your address.', fr: 'C’est déjà votre adresse.' },
  invalid_email_change: { en: 'This link is unknown, used, replaced or expired; ask for a new one.', fr: 'Ce lien est inconnu, déjà utilisé, remplacé ou expiré ; demandez-en un nouveau.' },
} satisfies ProblemWording;
