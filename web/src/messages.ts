// English and French wording, and the translator. Kept free of the DOM so tests can use it.
// French follows the API's own French names: utilisateurs, jetons, réunions.
// The wording lives beside each page (web/src/pages/<page>.messages.ts, the shell's in
// web/src/shell.messages.ts); a new page adds its file to PAGE_MESSAGES below.
// test/web-messages.test.ts checks every key has both languages, none empty, no key in two files.
import type { Wording } from './page-messages.js';
import { shellMessages } from './shell.messages.js';
import { problemMessages } from './problem.messages.js';
import { permissionMessages } from './permission.messages.js';
import { signInMessages } from './pages/sign-in.messages.js';
import { homeMessages } from './pages/home.messages.js';
import { usersMessages } from './pages/users.messages.js';
import { rolesMessages } from './pages/roles.messages.js';
import { apiKeysMessages } from './pages/api-keys.messages.js';
import { tasksMessages } from './pages/tasks.messages.js';
import { meetingsMessages } from './pages/meetings.messages.js';
import { auditMessages } from './pages/audit.messages.js';
import { auditTypeMessages } from './pages/audit-types.messages.js';
import { sessionsMessages } from './pages/sessions.messages.js';
import { passwordMessages } from './pages/password.messages.js';
import { securityMessages } from './pages/security.messages.js';
import { identityProvidersMessages } from './pages/identity-providers.messages.js';
import { webhooksMessages } from './pages/webhooks.messages.js';
import { invitationsMessages } from './pages/invitations.messages.js';
import { passwordResetMessages } from './pages/password-reset.messages.js';

/** Every page's wording, by file. */
export const PAGE_MESSAGES = {
  shell: shellMessages,
  problems: problemMessages,
  permissions: permissionMessages,
  signIn: signInMessages,
  home: homeMessages,
  users: usersMessages,
  roles: rolesMessages,
  apiKeys: apiKeysMessages,
  tasks: tasksMessages,
  meetings: meetingsMessages,
  audit: auditMessages,
  auditTypes: auditTypeMessages,
  sessions: sessionsMessages,
  password: passwordMessages,
  security: securityMessages,
  identityProviders: identityProvidersMessages,
  webhooks: webhooksMessages,
  invitations: invitationsMessages,
  passwordReset: passwordResetMessages,
};

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
