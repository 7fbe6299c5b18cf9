import { describe, expect, it } from 'vitest';
import { cleanName, cleanText, uniqueNameKey } from '../src/text/normalize.js';
import { DomainError } from '../src/errors.js';

const rule = { location: 'request/body/name', maxLength: 10 };
const codeOf = (f: () => unknown) => {
  try {
    f();
  } catch (error) {
    return error instanceof DomainError ? error.details.errors?.[0]?.error_code : 'not a domain error';
  }
  return 'accepted';
};

describe('text people read', () => {
  it('is NFC and trimmed', () => {
    expect(cleanName('  Cafe\u0301 ', rule)).toBe('Caf\u00e9');
  });
  it('refuses a right-to-left override hiding an extension (spoofing attack)', () => {
    expect(codeOf(() => cleanName('evil\u202Egpj.exe', rule))).toBe('bidi_control');
    expect(codeOf(() => cleanText('a\u2066b', rule))).toBe('bidi_control');
  });
  it('refuses line breaks in a name but keeps them in a text', () => {
    expect(codeOf(() => cleanName('a\nb', rule))).toBe('control_character');
    expect(cleanText('a\nb', rule)).toBe('a\nb');
  });
  it('refuses a blank name and a name too long once normalised', () => {
    expect(codeOf(() => cleanName('   ', rule))).toBe('blank');
    expect(codeOf(() => cleanName('e\u0301'.repeat(11), rule))).toBe('too_long');
    expect(cleanText('  ', rule)).toBe('');
  });
  it('compares unique names as RFC 8265 usernames: width, case, NFC (impersonation attack)', () => {
    expect(uniqueNameKey('\uFF21\uFF44\uFF4D\uFF49\uFF4E')).toBe('admin');
    expect(uniqueNameKey(cleanName('Admin ', rule))).toBe(uniqueNameKey('admin'));
    expect(uniqueNameKey('E\u0301')).toBe('\u00e9');
  });
});
