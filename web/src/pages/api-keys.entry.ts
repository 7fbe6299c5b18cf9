// The api-keys page's entry: its link in the navigation and its wording; the page (pages/api-keys.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { apiKeysMessages as messages } from './api-keys.messages.js';

export { messages };

export const page = {
  route: 'api-keys',
  nav: { section: 'people', order: 40, label: 'apiKeys.nav', needs: 'api_keys.manage' },
  module: 'api-keys',
} satisfies PageEntry<keyof typeof messages>;
