// The development mailbox's entry: reached from the invitations page's link where the server has
// one (never in production), so it has no link in the navigation; its wording is the recovery pages'.
import type { PageEntry } from '../page-entry.js';

export const page = {
  route: 'dev-mailbox',
  nav: null,
  module: 'password-reset',
  exportName: 'DevMailboxRoute',
} satisfies PageEntry;
