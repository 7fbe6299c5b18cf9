// The back office's wording, page by page (web/src/pages/<page>.messages.ts, web/src/shell.messages.ts):
// both languages hold the same keys, no wording is empty, both quote the same {placeholders}, and
// each key (and each key prefix) has one home, so a page's wording is found in one file.
import { describe, expect, it } from 'vitest';
import { PAGE_MESSAGES, dictionaries, LANGUAGES } from '../web/src/messages.js';
import type { Wording } from '../web/src/page-messages.js';

const pages = Object.entries(PAGE_MESSAGES) as [string, Record<string, Wording>][];
const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('the wording of the back office', () => {
  it.each(pages)('%s: every key has a non-empty English and French wording with the same placeholders', (_page, messages) => {
    expect(Object.keys(messages).length).toBeGreaterThan(0);
    for (const [key, wording] of Object.entries(messages)) {
      expect(Object.keys(wording).sort(), key).toEqual(Object.keys(LANGUAGES).sort());
      for (const language of Object.keys(LANGUAGES) as (keyof typeof LANGUAGES)[]) {
        expect(typeof wording[language], `${key} (${language})`).toBe('string');
        expect(wording[language].trim(), `${key} (${language}) is empty`).not.toBe('');
      }
      expect(placeholders(wording.fr), `${key}: placeholders`).toEqual(placeholders(wording.en));
    }
  });

  it('French uses one apostrophe, the typographic one (’), never the typewriter one', () => {
    const straight = Object.entries(dictionaries.fr).filter(([, text]) => text.includes("'"));
    expect(straight.map(([key, text]) => `${key}: ${text}`)).toEqual([]);
  });

  it('both languages have the same keys', () => {
    expect(Object.keys(dictionaries.fr).sort()).toEqual(Object.keys(dictionaries.en).sort());
  });

  it('no key is declared in two files, and each prefix lives in one file', () => {
    const fileOfKey = new Map<string, string>();
    const fileOfPrefix = new Map<string, string>();
    for (const [page, messages] of pages) {
      for (const key of Object.keys(messages)) {
        expect(fileOfKey.get(key), `${key} is in ${fileOfKey.get(key)} and ${page}`).toBeUndefined();
        fileOfKey.set(key, page);
        const prefix = key.split('.')[0]!;
        expect(fileOfPrefix.get(prefix) ?? page, `keys starting with ${prefix}. are in two files`).toBe(page);
        fileOfPrefix.set(prefix, page);
      }
    }
    expect(fileOfKey.size).toBe(Object.keys(dictionaries.en).length);
  });
});
