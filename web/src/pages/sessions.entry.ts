// The sessions page's entry: its link in the navigation and its wording; the page (pages/sessions.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { sessionsMessages as messages } from './sessions.messages.js';

export { messages };

export const page = {
  route: 'sessions',
  nav: { section: 'account', order: 10, label: 'sessions.nav', needs: null },
  module: 'sessions',
} satisfies PageEntry<keyof typeof messages>;
