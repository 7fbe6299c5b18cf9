// The home page's entry: its link in the navigation and its wording; the page (pages/home.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { homeMessages as messages } from './home.messages.js';

export { messages };

export const page = {
  route: 'home',
  nav: { section: 'top', order: 0, label: 'home.nav', needs: null },
  module: 'home',
} satisfies PageEntry<keyof typeof messages>;
