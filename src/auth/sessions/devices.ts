// The devices and browsers a person signs in from, for the notice of a sign-in from a new one
// (docs/MAIL.md, "A sign-in from a new device or browser").
//
// A device is the **family of the user agent**: the header in lower case with every version number
// taken out. Firefox 131 and Firefox 132 on one Linux are one device (browsers update every few
// weeks, and a notice at each update would teach people to ignore notices); Firefox and Chrome on
// it are two, and so are Firefox on Linux and Firefox on Windows. The address is no part of it:
// people change networks every day. Two people with the same browser have the same family, but
// each person's list is their own.
//
// Kept in the person's row (`users.known_devices`, migration 20270104T1000) as keyed digests, the
// first 16 bytes of an HMAC-SHA-256 under the sealing key for 'known-device', newest first, at most
// KNOWN_DEVICES_KEPT: a copy of the database alone tells nothing of the browsers a person uses, not
// even by testing guesses, and the raw header is never stored here (the sessions keep theirs, for
// SESSION_RETENTION_DAYS after they end). Remembering the device and deciding whether it is new are
// part of the sign-in's one statement (openSessionStatement, src/auth/sessions/repository.ts),
// which writes the person's row anyway.
//
// No notice while the person has no known device under the current key: their first sign-in (after
// an invitation, the first administrator's, anyone's first after this was deployed) and the first
// after a sealing-key rotation only start the list. A notice there would tell people of their own
// first sign-in, and the whole organisation at once after a deploy or a rotation.
import { sql, type RawBuilder } from 'kysely';
import type { Keyring } from '../secrets/sealing-keys.js';
import { keyedDigest } from '../secrets/sealing-keys.js';
import { renderMessage } from '../../mail/templates.js';
import { insertNotice, personLanguage, type NoticeTexts } from '../../mail/notices.js';

/** How many devices a person's row remembers: the most recently used. An eleventh pushes the oldest out. */
export const KNOWN_DEVICES_KEPT = 10;

/** Bytes of the HMAC kept per device: 128 bits, against at most KNOWN_DEVICES_KEPT digests of one person. */
const DIGEST_BYTES = 16;

/** The user agent without its version numbers (`131.0.6778.85`, `x86_64`'s digits, a build's `15E148`): browser, engine, system. */
export function userAgentFamily(userAgent: string): string {
  return userAgent.toLowerCase().replace(/\d+(?:[._]\d+)*/g, '#').replace(/\s+/g, ' ').trim();
}

/** The digest a device is remembered by, under `key` (the sealing key for 'known-device'). */
export function deviceDigest(key: Buffer, userAgent: string): Buffer {
  return keyedDigest(key, userAgentFamily(userAgent)).subarray(0, DIGEST_BYTES);
}

// Names from a closed list, tried in order (Edge's and Opera's user agents also say Chrome, Chrome's
// says Safari; Android's says Linux, an iPhone's says Mac OS X): what a notice may say of a device.
// Nothing of the header itself goes into a message, since its text is whatever the client sent.
const BROWSERS: readonly (readonly [RegExp, string])[] = [
  [/\bedg(?:e|a|ios)?\//, 'Edge'],
  [/\bopr\/|\bopera\b/, 'Opera'],
  [/\bsamsungbrowser\//, 'Samsung Internet'],
  [/\bfirefox\/|\bfxios\//, 'Firefox'],
  [/\bchrome\/|\bcrios\/|\bchromium\//, 'Chrome'],
  [/\bversion\/.*\bsafari\//, 'Safari'],
];
const SYSTEMS: readonly (readonly [RegExp, string])[] = [
  [/\biphone\b|\bipad\b|\bipod\b/, 'iOS'],
  [/\bandroid\b/, 'Android'],
  [/\bwindows\b/, 'Windows'],
  [/\bcros\b/, 'ChromeOS'],
  [/\bmac os x\b|\bmacintosh\b/, 'macOS'],
  [/\blinux\b/, 'Linux'],
];

/** The browser and the system a user agent names, as far as they are among the known ones. */
export function recognisedDevice(userAgent: string): { browser: string | null; system: string | null } {
  const text = userAgent.toLowerCase();
  const first = (list: readonly (readonly [RegExp, string])[]) => list.find(([pattern]) => pattern.test(text))?.[1] ?? null;
  return { browser: first(BROWSERS), system: first(SYSTEMS) };
}

/** What a sign-in hands its statement about the device it comes from: its digest, and the notice should it be new. */
export interface DeviceSighting {
  digest: Buffer;
  /** The id of the sealing key of `digest`. */
  keyId: string;
  /** Rendered in both languages before the statement, which picks the person's (it writes it only for a new device). */
  notice: NoticeTexts;
}

/** The sighting of the device of a request (its address and user agent, as ClientInfo holds them) at `at`. */
export function sightDevice(keys: Keyring, client: { ip: string; userAgent: string }, at: Date): DeviceSighting {
  const values = { at, address: client.ip, ...recognisedDevice(client.userAgent) };
  return {
    digest: deviceDigest(keys.current.key('known-device'), client.userAgent),
    keyId: keys.current.id,
    notice: { en: renderMessage('new_device_sign_in', 'en', values), fr: renderMessage('new_device_sign_in', 'fr', values) },
  };
}

/**
 * For the sign-in's statement: the INSERT of the notice to the person of the CTE `u` (its `id`,
 * `email`, `language` and `new_device`), in their language, when `u.new_device`. For a known device the
 * CTE gives no row and the language is never looked up.
 */
export function newDeviceNotice(texts: NoticeTexts, at: unknown): RawBuilder<unknown> {
  return insertNotice('new_device_sign_in', texts, at, sql`select u.id, u.email, ${personLanguage('u')} as language from u where u.new_device`);
}
