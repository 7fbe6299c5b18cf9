// SCIM filters (RFC 7644, 3.4.2.2) read with `scim2-parse-filter` (a maintained parser of the
// whole grammar, with no dependencies), then narrowed to what this service answers: `eq` on
// userName, externalId, displayName and id, joined by `and` / `or`. Anything else, and anything
// the parser refuses, is `400 invalidFilter`: a directory must not believe a filter was applied.
import { parse, type Filter } from 'scim2-parse-filter';
import { DomainError } from '../errors.js';
import { emailKey } from '../users/names.js';

/** The attributes a filter may test, by their lower-case name (SCIM attribute names are case-insensitive). */
const FILTERABLE = { username: 'userName', externalid: 'externalId', displayname: 'displayName', id: 'id', 'emails.value': 'userName' } as const;
export type FilterAttribute = (typeof FILTERABLE)[keyof typeof FILTERABLE];

/** `value`: as compared (a userName's is its e-mail key, src/users/names.ts: e-mails compare case-insensitively). */
export type UserFilter =
  | { op: 'eq'; attribute: FilterAttribute; value: string }
  | { op: 'and' | 'or'; filters: UserFilter[] };

const SUPPORTED = 'userName eq "a@example.com", externalId eq "...", displayName eq "...", id eq "...", joined by and / or';

export const invalidFilter = (why: string) => new DomainError('invalid', 'invalid_filter', `${why} This service reads filters of the form ${SUPPORTED}.`);

const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:user:';

/** The filter as this service reads it, or `400 invalidFilter`. */
export function parseUserFilter(text: string): UserFilter {
  let tree: Filter;
  try {
    tree = parse(text);
  } catch {
    throw invalidFilter('The filter is not valid SCIM filter syntax.');
  }
  return narrow(tree, 0);
}

function narrow(node: Filter, depth: number): UserFilter {
  if (depth > 10) throw invalidFilter('The filter is nested too deep.');
  if (node.op === 'and' || node.op === 'or') return { op: node.op, filters: node.filters.map((f) => narrow(f, depth + 1)) };
  if (node.op !== 'eq') throw invalidFilter(`The operator ${node.op} is not supported.`);
  let name = node.attrPath.toLowerCase();
  if (name.startsWith(CORE_USER)) name = name.slice(CORE_USER.length);
  const attribute = FILTERABLE[name as keyof typeof FILTERABLE];
  if (!attribute) throw invalidFilter(`The attribute ${node.attrPath} cannot be filtered on.`);
  if (typeof node.compValue !== 'string') throw invalidFilter(`${node.attrPath} is compared with a string.`);
  return { op: 'eq', attribute, value: attribute === 'userName' ? emailKey(node.compValue) : node.compValue };
}
