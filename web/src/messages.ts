// English and French wording, and the translator. Kept free of the DOM so tests can use it.
// French follows the API's own French names: utilisateurs, jetons, réunions.
// The wording lives beside each page (web/src/pages/<page>.messages.ts, handed over by its entry in
// web/src/pages/registry.ts; the shell's in web/src/shell.messages.ts).
// test/web-messages.test.ts checks every key has both languages, none empty, no key in two files.
import type { Wording } from './page-messages.js';
import { shellMessages } from './shell.messages.js';
import { problemMessages } from './problem.messages.js';
import { permissionMessages } from './permission.messages.js';
import { signInMessages } from './pages/sign-in.messages.js';
import { auditTypeMessages } from './pages/audit-types.messages.js';
import { auditLineMessages } from './pages/audit-lines.messages.js';
import { passwordResetMessages } from './pages/password-reset.messages.js';
import * as pages from './pages/registry.js';

/** The wording every page shares, and the signed-out pages' (they are not in the navigation). */
const SHARED_MESSAGES = {
  shell: shellMessages,
  problems: problemMessages,
  permissions: permissionMessages,
  auditTypes: auditTypeMessages,
  auditLines: auditLineMessages,
  signIn: signInMessages,
  passwordReset: passwordResetMessages,
};

type Entries = typeof pages;
type EntryMessages = { [P in keyof Entries]: Entries[P] extends { messages: infer M } ? M : Record<never, Wording> };

/** Every page's wording, by file: the shared ones, then each page's of the registry. */
export const PAGE_MESSAGES = {
  ...SHARED_MESSAGES,
  ...Object.fromEntries(Object.entries(pages).flatMap(([name, entry]) => ('messages' in entry ? [[name, entry.messages]] : []))),
} as typeof SHARED_MESSAGES & EntryMessages;

type Pages = typeof PAGE_MESSAGES;
export type MessageKey = { [P in keyof Pages]: keyof Pages[P] }[keyof Pages] & string;

export const LANGUAGES = { en: 'English', fr: 'Français' } as const;
export type Language = keyof typeof LANGUAGES;

function dictionary(language: Language): Record<MessageKey, string> {
  const entries = Object.values(PAGE_MESSAGES).flatMap((page) => Object.entries(page as Record<string, Wording>).map(([key, wording]) => [key, wording[language]]));
  return Object.fromEntries(entries) as Record<MessageKey, string>;
}

export const dictionaries: Record<Language, Record<MessageKey, string>> = { en: dictionary('en'), fr: dictionary('fr') };

export type T = (key: MessageKey, params?: Record<string, string | number>) => string;

export function translator(language: Language): T {
  return (key, params) => dictionaries[language][key].replace(/\{(\w+)\}/g, (_, name: string) => String(params?.[name] ?? `{${name}}`));
}
