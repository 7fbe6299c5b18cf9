// The audit page's entry: its link in the navigation and its wording; the page (pages/audit.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { auditMessages as messages } from './audit.messages.js';

export { messages };

export const page = {
  route: 'audit',
  nav: { section: 'activity', order: 10, label: 'audit.nav', needs: 'audit.read' },
  module: 'audit',
} satisfies PageEntry<keyof typeof messages>;
