// The webhooks page's entry: its link in the navigation and its wording; the page (pages/webhooks.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { webhooksMessages as messages } from './webhooks.messages.js';

export { messages };

export const page = {
  route: 'webhooks',
  nav: { section: 'people', order: 60, label: 'webhooks.nav', needs: 'webhooks.manage' },
  module: 'webhooks',
} satisfies PageEntry<keyof typeof messages>;
