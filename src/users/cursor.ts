// The opaque cursor of keyset pagination: the (created_at, id) of the last user of a page.
// created_at travels as PostgreSQL prints it, to the microsecond: a JS Date would round it to the
// millisecond and skip or repeat users created within the same millisecond.
import { invalid } from '../errors.js';
import { UUID } from '../uuid.js';

export interface UserCursor {
  createdAt: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export function encodeCursor(cursor: UserCursor): string {
  return Buffer.from(JSON.stringify({ t: cursor.createdAt, i: cursor.id })).toString('base64url');
}

export function decodeCursor(value: string): UserCursor {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof parsed.t === 'string' && TIMESTAMP.test(parsed.t) && typeof parsed.i === 'string' && UUID.test(parsed.i)) {
      return { createdAt: parsed.t, id: parsed.i };
    }
  } catch {
    // fall through: not base64url JSON
  }
  throw invalid('invalid_cursor', 'The cursor is not one this service issued; start again without it.', {
    errors: [{ location: 'request/query/cursor', message: 'is not a valid cursor' }],
  });
}
