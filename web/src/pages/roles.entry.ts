// The roles page's entry: its link in the navigation and its wording; the page (pages/roles.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { rolesMessages as messages } from './roles.messages.js';

export { messages };

export const page = {
  route: 'roles',
  nav: { section: 'people', order: 30, label: 'roles.nav', needs: 'roles.manage' },
  module: 'roles',
} satisfies PageEntry<keyof typeof messages>;
