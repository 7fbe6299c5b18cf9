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

/** A group's filterable attributes (groups are roles: src/scim/groups.ts). */
const GROUP_FILTERABLE = { displayname: 'displayName', id: 'id' } as const;
/** `member`: Entra ID's `members[value eq "<user id>"]`, a group the person is a member of. */
export type GroupFilter =
  | { op: 'eq'; attribute: (typeof GROUP_FILTERABLE)[keyof typeof GROUP_FILTERABLE] | 'member'; value: string }
  | { op: 'and' | 'or'; filters: GroupFilter[] };
const GROUP_SUPPORTED = 'displayName eq "...", id eq "...", members[value eq "<user id>"], joined by and / or';
const CORE_GROUP = 'urn:ietf:params:scim:schemas:core:2.0:group:';

function parseTree(text: string, supported: string): Filter {
  try {
    return parse(text);
  } catch {
    throw new DomainError('invalid', 'invalid_filter', `The filter is not valid SCIM filter syntax. This service reads filters of the form ${supported}.`);
  }
}

/** The filter as this service reads it, or `400 invalidFilter`. */
export function parseUserFilter(text: string): UserFilter {
  return narrow(parseTree(text, SUPPORTED), 0, FILTERABLE, CORE_USER, invalidFilter) as UserFilter;
}

/** A group filter (`displayName eq`, `id eq`), or `400 invalidFilter`. */
export function parseGroupFilter(text: string): GroupFilter {
  const refuse = (why: string) => new DomainError('invalid', 'invalid_filter', `${why} This service reads group filters of the form ${GROUP_SUPPORTED}.`);
  return narrow(parseTree(text, GROUP_SUPPORTED), 0, GROUP_FILTERABLE, CORE_GROUP, refuse) as GroupFilter;
}

type Narrowed = { op: 'eq'; attribute: string; value: string } | { op: 'and' | 'or'; filters: Narrowed[] };

function narrow(node: Filter, depth: number, filterable: Record<string, string>, core: string, refuse: (why: string) => DomainError): Narrowed {
  if (depth > 10) throw refuse('The filter is nested too deep.');
  if (node.op === 'and' || node.op === 'or') return { op: node.op, filters: node.filters.map((f) => narrow(f, depth + 1, filterable, core, refuse)) };
  if (node.op === '[]') {
    // Only a group's members, by their value (Entra ID asks whether a person is a member so).
    const inner = node.valFilter;
    const isMembers = core === CORE_GROUP && node.attrPath.toLowerCase().replace(core, '') === 'members';
    if (!isMembers || inner.op !== 'eq' || inner.attrPath.toLowerCase() !== 'value' || typeof inner.compValue !== 'string') {
      throw refuse(`The filter ${node.attrPath}[...] is not supported.`);
    }
    return { op: 'eq', attribute: 'member', value: inner.compValue };
  }
  if (node.op !== 'eq') throw refuse(`The operator ${node.op} is not supported.`);
  let name = node.attrPath.toLowerCase();
  if (name.startsWith(core)) name = name.slice(core.length);
  const attribute = Object.hasOwn(filterable, name) ? filterable[name] : undefined;
  if (!attribute) throw refuse(`The attribute ${node.attrPath} cannot be filtered on.`);
  if (typeof node.compValue !== 'string') throw refuse(`${node.attrPath} is compared with a string.`);
  return { op: 'eq', attribute, value: attribute === 'userName' ? emailKey(node.compValue) : node.compValue };
}
