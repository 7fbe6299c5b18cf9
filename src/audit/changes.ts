// Before/after of a change: only the fields that differ. Arrays are compared as given, so callers
// pass sets (permissions, role names) sorted.
import type { Changes } from './events.js';
import { canonicalJson } from './hash.js';

/** The fields of `after` (undefined: not part of the change) whose value differs from `before`; null when none does. */
export function changesBetween(before: Record<string, unknown>, after: Record<string, unknown>): Changes | null {
  const was: Record<string, unknown> = {};
  const is: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(after)) {
    if (value === undefined || canonicalJson(before[field] ?? null) === canonicalJson(value)) continue;
    was[field] = before[field] ?? null;
    is[field] = value;
  }
  return Object.keys(is).length === 0 ? null : { before: was, after: is };
}

/** A timestamp as the API prints it, null kept. */
export const iso = (value: Date | string | null | undefined): string | null => (value === null || value === undefined ? null : new Date(value).toISOString());
