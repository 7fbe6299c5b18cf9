// An e-mail address found in text as a whole: what an erasure searches the journal, the outbox, the
// event payloads and the kept answers for (docs/ERASURE.md), in SQL and in JavaScript alike.

/**
 * The case-insensitive pattern of an e-mail address as a whole, in PostgreSQL's regular
 * expressions and JavaScript's alike: not inside a longer address (`x@example.com` does not match
 * `max@example.com` nor `x@example.com.au`).
 */
export function wholeAddressPattern(email: string): string {
  const escaped = email.replace(/[.*+?^${}()|[\]\\-]/g, (c) => `\\${c}`);
  return `(?<![A-Za-z0-9.!#$%&'*+/=?^_\`{|}~-])${escaped}(?![A-Za-z0-9_-]|\\.[A-Za-z0-9])`;
}
