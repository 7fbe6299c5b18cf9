// The navigation the back office declares (web/src/pages/registry.ts): what the browser tests
// expect to see, so a new page is checked without editing them.
import * as pages from '../../web/src/pages/registry.js';
import { navigationOf } from '../../web/src/page-entry.js';
import { dictionaries, type Language, type MessageKey } from '../../web/src/messages.js';

const SECTION_LABELS = { work: 'nav.section.work', people: 'nav.section.people', activity: 'nav.section.activity', account: 'nav.section.account' } as const;

/** The labelled sections and their links' words, in order (Home, alone above them, is not one); with `permissions`, only the links they open. */
export function declaredSections(language: Language = 'en', permissions?: readonly string[]): [string, string[]][] {
  const words = dictionaries[language];
  return navigationOf(Object.values(pages).map((entry) => entry.page)).flatMap(({ section, pages: all }) => {
    const links = all.filter((link) => !permissions || link.needs === null || permissions.includes(link.needs));
    return section === 'top' || links.length === 0 ? [] : [[words[SECTION_LABELS[section]], links.map((link) => words[link.label as MessageKey])] as [string, string[]]];
  });
}

/** Every link of the navigation, Home first, for a person who may open every page (or only those `permissions` open). */
export const declaredLinks = (language: Language = 'en', permissions?: readonly string[]) => [dictionaries[language]['home.nav'], ...declaredSections(language, permissions).flatMap(([, links]) => links)];

/** The route of every page with a link in the navigation. */
export const declaredRoutes = () => Object.values(pages).flatMap((entry) => (entry.page.nav ? [entry.page.route] : []));
