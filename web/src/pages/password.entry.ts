// The password page's entry: its link in the navigation and its wording; the page (pages/password.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { passwordMessages as messages } from './password.messages.js';

export { messages };

export const page = {
  route: 'password',
  nav: { section: 'account', order: 30, label: 'password.nav', needs: null },
  module: 'password',
} satisfies PageEntry<keyof typeof messages>;
