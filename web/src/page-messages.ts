// How a page declares its wording: each key with its English and French side by side, so a key
// cannot be added in one language only (it does not compile) and a translator reads both at once.
// One file per page beside it (web/src/pages/<page>.messages.ts; the shell's in
// web/src/shell.messages.ts), gathered in web/src/messages.ts. Keys start with the page's prefix.

export interface Wording {
  en: string;
  fr: string;
}

export function pageMessages<K extends string>(messages: Record<K, Wording>): Record<K, Wording> {
  return messages;
}
