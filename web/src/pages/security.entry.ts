// The security page's entry: its link in the navigation and its wording; the page (pages/security.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { securityMessages as messages } from './security.messages.js';

export { messages };

export const page = {
  route: 'security',
  nav: { section: 'account', order: 20, label: 'security.nav', needs: null },
  module: 'security',
} satisfies PageEntry<keyof typeof messages>;
