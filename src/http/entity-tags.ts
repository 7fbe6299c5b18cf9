// Entity tags (RFC 9110, 8.8.3) and the conditional headers that carry them (13.1.1 If-Match,
// 13.1.2 If-None-Match). A tag names one revision of a resource in one key style: the same
// revision answers four different bodies (x-api-inflection), and a strong validator must tell
// the representations of a resource apart, so the style is part of the tag (as Apache's -gzip
// suffix is for content codings). The tag is a digest of (style, resource id, revision), short
// and opaque: the revision is made of row versions, never of the body (docs/SAFE-WRITES.md), so
// two resources can share one (two tasks freshly made by one creator), and the id in the tag keeps
// one's tag from opening the other.
import { createHash } from 'node:crypto';
import type { Inflection } from '../contract/inflection.js';
import type { Precondition } from '../revisions/precondition.js';

/** What a tag names: a resource (its id; ids are case-insensitive uuids) at a revision. What handlers answer as `revision`. */
export const revisionOf = (id: string, revision: string): string => `${id.toLowerCase()}\n${revision}`;

/** The tag of a named revision (revisionOf) in one key style. */
export function entityTag(revision: string, style: Inflection): string {
  return `"${createHash('sha256').update(`${style}\n${revision}`).digest('base64url').slice(0, 22)}"`;
}

interface ListedTag {
  weak: boolean;
  opaque: string;
}

/** `*`, or the tags of an If-Match / If-None-Match field (the contract's pattern has checked its syntax). */
function parseTagList(field: string): '*' | ListedTag[] {
  if (field.trim() === '*') return '*';
  return [...field.matchAll(/(W\/)?("[^"]*")/g)].map((m) => ({ weak: m[1] !== undefined, opaque: m[2]! }));
}

/**
 * If-Match as a precondition on the revision of the resource `id` (the path's): `*` holds for any existing resource, a
 * list holds when one of its tags matches the current one by strong comparison (a weak tag never
 * does). Undefined without the header: the write goes through as before.
 */
export function ifMatchPrecondition(field: string | undefined, style: Inflection, id: string): Precondition | undefined {
  if (field === undefined) return undefined;
  const tags = parseTagList(field);
  if (tags === '*') return () => true;
  return (revision) => {
    const current = entityTag(revisionOf(id, revision), style);
    return tags.some((t) => !t.weak && t.opaque === current);
  };
}

/** If-None-Match on a GET: true when the client's copy is current (weak comparison), so 304 answers. */
export function notModified(field: string | undefined, currentTag: string): boolean {
  if (field === undefined) return false;
  const tags = parseTagList(field);
  return tags === '*' || tags.some((t) => t.opaque === currentTag);
}
