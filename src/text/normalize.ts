// Text that people read is text other people wrote. Every name, title and description the API
// stores passes through here first, so that nothing reads differently in the back office or the
// audit journal than it is: Unicode NFC, trimmed, and no bidirectional control characters (which
// can make `evil.exe‮gpj.` display as `evil.exe.jpg`). Names that must be unique are compared by
// their key (RFC 8265's UsernameCaseMapped profile): full-width forms mapped to ASCII, lower-cased,
// NFC; so `Ａｄｍｉｎ`, `ADMIN` and `admin ` are the same name as `admin`.
import { validationFailed } from '../errors.js';

/** U+202A–U+202E (embeddings, overrides) and U+2066–U+2069 (isolates). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/u;
/**
 * Half of a UTF-16 surrogate pair standing alone (JSON's "\ud800"): no character at all, which
 * PostgreSQL refuses in the journal's JSON and UTF-8 would store as U+FFFD. With the u flag the
 * class matches only unpaired halves; a whole pair (an emoji) is one code point.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
/** C0 and C1 controls and DEL: a one-line name has no line breaks or tabs either. */
const LINE_CONTROLS = /[\u0000-\u001F\u007F-\u009F]/u;
/** The same, but a description may keep its tabs and line breaks. */
const TEXT_CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/u;

export interface TextRule {
  /** Where the value came from, as a validation error names it: `request/body/title`. */
  location: string;
  /** Longest accepted length after normalising, in characters (code points), as JSON Schema and PostgreSQL's char_length count. */
  maxLength: number;
  /** Whether an empty value (after trimming) is accepted. */
  allowEmpty?: boolean;
}

/** Characters as people and the contract count them: an emoji is one, not its two UTF-16 halves. */
function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function clean(value: string, rule: TextRule, controls: RegExp): string {
  const text = value.normalize('NFC').trim();
  const fail = (message: string, code: string) => validationFailed([{ location: rule.location, message, error_code: code }]);
  if (BIDI_CONTROLS.test(text)) throw fail('must not contain bidirectional control characters', 'bidi_control');
  if (controls.test(text)) throw fail('must not contain control characters', 'control_character');
  if (LONE_SURROGATE.test(text)) throw fail('must not contain a lone surrogate (half of a UTF-16 pair)', 'lone_surrogate');
  if (!rule.allowEmpty && text.length === 0) throw fail('must not be blank', 'blank');
  if (codePoints(text) > rule.maxLength) throw fail(`must be at most ${rule.maxLength} characters`, 'too_long');
  return text;
}

/** A one-line name or title: NFC, trimmed, no controls or bidirectional controls, not blank. */
export function cleanName(value: string, rule: TextRule): string {
  return clean(value, rule, LINE_CONTROLS);
}

/** A free text (a description): NFC, trimmed, line breaks and tabs kept, no other controls. */
export function cleanText(value: string, rule: TextRule): string {
  return clean(value, { allowEmpty: true, ...rule }, TEXT_CONTROLS);
}

/** Full-width and half-width forms (U+FF01–U+FFEE) and the ideographic space, to their narrow forms. */
function mapWidth(value: string): string {
  return value.replace(/[\u3000\uFF01-\uFFEE]/gu, (c) => c.normalize('NFKC'));
}

/**
 * The key two unique names are compared by (RFC 8265, UsernameCaseMapped): width mapped, lower
 * case, NFC. Apply it to a value already through cleanName.
 */
export function uniqueNameKey(name: string): string {
  return mapWidth(name.normalize('NFC')).toLowerCase().normalize('NFC');
}
