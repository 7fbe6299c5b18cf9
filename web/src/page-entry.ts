// What a page of the back office declares (web/src/pages/<page>.entry.ts, listed in
// web/src/pages/registry.ts): its route, its link in the navigation and who sees it, its wording,
// and the module of the page itself, loaded when it is opened. An entry imports no page code, so
// the wording and the navigation are read without a browser (the tests do).
import type { components } from '../../generated/openapi.js';
import type { Wording } from './page-messages.js';

type Me = components['schemas']['Me'];
type Permission = components['schemas']['Permission'];
type AuditEventType = components['schemas']['AuditEventType'];

/** What the router hands a page: the route's second segment (a record's id, a week) and who is signed in. */
export interface PageProps {
  id: string | undefined;
  me: Me;
}

/** The navigation's sections, in order; `top` holds Home alone, above the labelled ones. */
export const SECTIONS = ['top', 'work', 'people', 'activity', 'account'] as const;
export type Section = (typeof SECTIONS)[number];

export interface PageEntry<Label extends string = string> {
  /** The route's first segment (`#/tasks/…`). */
  route: string;
  /**
   * Its link: the section, its place there (links in ascending `order`), the wording of the link,
   * the permission that shows it (null: everyone signed in). None: reached from another page.
   */
  nav: { section: Section; order: number; label: Label; needs: Permission | null } | null;
  /** The page's module, web/src/pages/<module>.tsx, loaded when the page is first opened (web/src/pages/load.ts); it exports the component taking PageProps as `Route` unless `exportName` says otherwise. */
  module: string;
  exportName?: string;
}

/** What a feature's page says of the contract's words it brings: its permissions, and its audit event types (their name, and their line in the journal). */
export type PermissionWording = Partial<Record<Permission, Wording>>;
/** What the page says for the problem codes of its feature's operations, by code. */
export type ProblemWording = Record<string, Wording>;
export type AuditTypeWording = Partial<Record<AuditEventType, { name: Wording; line: Wording }>>;

/** A section of the navigation and its links, in order. */
export interface NavSection<Label extends string = string> {
  section: Section;
  pages: { route: string; label: Label; needs: Permission | null }[];
}

/** The navigation the entries declare: every section in order, its links by their `order` (an empty section is kept). */
export function navigationOf<Label extends string>(entries: readonly PageEntry<Label>[]): NavSection<Label>[] {
  return SECTIONS.map((section) => ({
    section,
    pages: entries
      .flatMap((entry) => (entry.nav?.section === section ? [{ route: entry.route, order: entry.nav.order, label: entry.nav.label, needs: entry.nav.needs }] : []))
      .sort((a, b) => a.order - b.order)
      .map(({ order: _, ...page }) => page),
  }));
}
