// The cursor of GET /users: the (created_at, id) of the last user of a page, signed for the filters
// of the query (src/pagination/signed-cursor.ts). created_at travels as PostgreSQL prints it, to
// the microsecond: a JS Date would round it to the millisecond and skip or repeat users created
// within the same millisecond.
import { invalidCursor, openCursor, sealCursor } from '../pagination/signed-cursor.js';
import { UUID } from '../uuid.js';
import { ISO_MICROS } from '../db/iso-time.js';

export interface UserCursor {
  createdAt: string;
  id: string;
}

/** The filters a cursor is bound to, besides its position. */
export interface CursorScope {
  status?: string | undefined;
  role?: string | undefined;
  search?: string | undefined;
}

/** The list and its order, then the filters as the query compares them (roles without regard to case). */
const scopeOf = (scope: CursorScope) => ['users', 'created_at,id', scope.status ?? null, scope.role?.toLowerCase() ?? null, scope.search ?? null];

export function encodeCursor(key: Buffer, cursor: UserCursor, scope: CursorScope): string {
  return sealCursor(key, { t: cursor.createdAt, i: cursor.id }, scopeOf(scope));
}

export function decodeCursor(key: Buffer, value: string, scope: CursorScope): UserCursor {
  const { t, i } = openCursor(key, value, scopeOf(scope));
  if (typeof t === 'string' && ISO_MICROS.test(t) && typeof i === 'string' && UUID.test(i)) return { createdAt: t, id: i };
  throw invalidCursor();
}
