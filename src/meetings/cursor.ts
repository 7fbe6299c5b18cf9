// The cursor of GET /meetings: the (starts_at, id) of the last meeting of a page, signed for the
// range and attendee of the query (src/pagination/signed-cursor.ts). starts_at travels as
// PostgreSQL prints it, to the microsecond, as in src/users/cursor.ts.
import { invalidCursor, openCursor, sealCursor } from '../pagination/signed-cursor.js';
import { UUID } from '../uuid.js';
import { ISO_MICROS } from '../db/iso-time.js';

export interface MeetingCursor {
  startsAt: string;
  id: string;
}

/** What a cursor is bound to, besides its position: the range and the person (`me` already resolved to an id). */
export interface CursorScope {
  from: Date;
  until: Date;
  attendeeId?: string | undefined;
}

const scopeOf = (scope: CursorScope) => ['meetings', 'starts_at,id', scope.from.toISOString(), scope.until.toISOString(), scope.attendeeId?.toLowerCase() ?? null];

export function encodeCursor(key: Buffer, cursor: MeetingCursor, scope: CursorScope): string {
  return sealCursor(key, { t: cursor.startsAt, i: cursor.id }, scopeOf(scope));
}

export function decodeCursor(key: Buffer, value: string, scope: CursorScope): MeetingCursor {
  const { t, i } = openCursor(key, value, scopeOf(scope));
  if (typeof t === 'string' && ISO_MICROS.test(t) && typeof i === 'string' && UUID.test(i)) return { startsAt: t, id: i };
  throw invalidCursor();
}
