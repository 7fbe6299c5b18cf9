// The users page's entry: its link in the navigation and its wording; the page (pages/users.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { usersMessages as messages } from './users.messages.js';

export { messages };

export const page = {
  route: 'users',
  nav: { section: 'people', order: 10, label: 'users.nav', needs: 'users.list' },
  module: 'users',
} satisfies PageEntry<keyof typeof messages>;
