// The identity-providers page's entry: its link in the navigation and its wording; the page (pages/identity-providers.tsx) loads when opened.
import type { PageEntry } from '../page-entry.js';
import { identityProvidersMessages as messages } from './identity-providers.messages.js';

export { messages };

export const page = {
  route: 'identity-providers',
  nav: { section: 'people', order: 50, label: 'identityProviders.nav', needs: 'identity_providers.manage' },
  module: 'identity-providers',
} satisfies PageEntry<keyof typeof messages>;
