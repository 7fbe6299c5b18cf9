// Loads a page's module when it is first opened: each page is its own chunk of the bundle, so the
// first screen downloads only the shell and the page it shows.
import type { FunctionComponent } from 'preact';
import type { PageEntry, PageProps } from '../page-entry.js';

type PageModule = Record<string, FunctionComponent<PageProps> | unknown>;

// The pages the shell itself shows (signing in, a required password or second factor, the links of
// messages) are in the first chunk already: they are taken from it, every other page is its own chunk.
const IN_THE_SHELL = import.meta.glob<PageModule>(['./sign-in.tsx', './password.tsx', './security.tsx', './password-reset.tsx', './invitations.tsx'], { eager: true });
const MODULES: Record<string, () => Promise<PageModule>> = {
  ...import.meta.glob<PageModule>(['./*.tsx', '!./sign-in.tsx', '!./password.tsx', '!./security.tsx', '!./password-reset.tsx', '!./invitations.tsx']),
  ...Object.fromEntries(Object.entries(IN_THE_SHELL).map(([path, module]) => [path, async () => module])),
};

export async function loadPage(entry: PageEntry): Promise<FunctionComponent<PageProps>> {
  const load = MODULES[`./${entry.module}.tsx`];
  if (!load) throw new Error(`No page module ${entry.module}.tsx for the route ${entry.route}.`);
  const component = (await load())[entry.exportName ?? 'Route'];
  if (typeof component !== 'function') throw new Error(`${entry.module}.tsx exports no ${entry.exportName ?? 'Route'}.`);
  return component as FunctionComponent<PageProps>;
}
