// A key's metadata: a JSON object of the partner's own, stored as sent and returned when the key
// is read. Bounded here (the contract says an object of at most 50 members; the rest it cannot
// say): at most METADATA_MAX_BYTES as compact JSON in UTF-8, nested at most METADATA_MAX_DEPTH
// levels (the object itself is level 1). Refused as a whole, before anything is written.
import { fieldError } from '../errors.js';

export const METADATA_MAX_BYTES = 4096;
export const METADATA_MAX_DEPTH = 5;

/** How deep `value` nests objects and arrays (a scalar: 0), stopping once past `limit`. */
function depthOf(value: unknown, limit: number): number {
  if (value === null || typeof value !== 'object') return 0;
  if (limit < 0) return 1;
  let deepest = 0;
  for (const child of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) {
    deepest = Math.max(deepest, depthOf(child, limit - 1));
    if (deepest > limit) break;
  }
  return 1 + deepest;
}

/**
 * Half of a UTF-16 surrogate pair standing alone (JSON's "\ud800"), in a key or a string at any
 * level: PostgreSQL's jsonb refuses it, so it is a 400 here rather than a failed INSERT (a 500).
 * With the u flag the class matches only unpaired halves; an emoji's pair is one code point.
 */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;
function holdsLoneSurrogate(value: unknown): boolean {
  if (typeof value === 'string') return LONE_SURROGATE.test(value);
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(holdsLoneSurrogate);
  return Object.entries(value as Record<string, unknown>).some(([key, child]) => LONE_SURROGATE.test(key) || holdsLoneSurrogate(child));
}

/** The metadata as it will be stored, or a 400 that says which bound it passes. */
export function checkedMetadata(value: Record<string, unknown> | null | undefined): Record<string, unknown> | null | undefined {
  if (value === undefined || value === null) return value;
  // Depth first: its walk stops past the bound, where serializing a deeply nested value would not.
  if (depthOf(value, METADATA_MAX_DEPTH) > METADATA_MAX_DEPTH) {
    throw fieldError('body', 'metadata', `must nest at most ${METADATA_MAX_DEPTH} levels of objects and arrays`, 'metadata_too_deep');
  }
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > METADATA_MAX_BYTES) {
    throw fieldError('body', 'metadata', `must be at most ${METADATA_MAX_BYTES} bytes as compact JSON (it is ${bytes})`, 'metadata_too_large');
  }
  // After both bounds: the walk is then over at most 5 levels and 4 KiB.
  if (holdsLoneSurrogate(value)) throw fieldError('body', 'metadata', 'must not contain a lone surrogate (half of a UTF-16 pair)', 'lone_surrogate');
  return value;
}
