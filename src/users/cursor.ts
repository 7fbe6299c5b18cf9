// The opaque cursor of keyset pagination: the (created_at, id) of the last user of a page, signed.
// created_at travels as PostgreSQL prints it, to the microsecond: a JS Date would round it to the
// millisecond and skip or repeat users created within the same millisecond.
//
// A cursor is input, never trusted: it carries an HMAC-SHA256, keyed by the database's
// `cursor_signing` secret, over its position AND the list, order and filters it was made for. An
// edited cursor, or one made under other filters, is refused with 400 invalid_cursor before its
// content is even parsed. Rotating the secret invalidates outstanding cursors, and nothing else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalid } from '../errors.js';
import { UUID } from '../uuid.js';

export interface UserCursor {
  createdAt: string;
  id: string;
}

/** What a cursor is bound to, besides its position: the filters of the query that made it. */
export interface CursorScope {
  status?: string | undefined;
  role?: string | undefined;
  search?: string | undefined;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** The list and its order, then the filters as the query compares them (roles without regard to case). */
const scopeOf = (scope: CursorScope) =>
  JSON.stringify(['users', 'created_at,id', scope.status ?? null, scope.role?.toLowerCase() ?? null, scope.search ?? null]);

const mac = (key: Buffer, payload: string, scope: CursorScope) => createHmac('sha256', key).update(`${payload}\n${scopeOf(scope)}`).digest();

export function encodeCursor(key: Buffer, cursor: UserCursor, scope: CursorScope): string {
  const payload = Buffer.from(JSON.stringify({ t: cursor.createdAt, i: cursor.id })).toString('base64url');
  return `${payload}.${mac(key, payload, scope).toString('base64url')}`;
}

export function decodeCursor(key: Buffer, value: string, scope: CursorScope): UserCursor {
  const [payload, signature, ...rest] = value.split('.');
  const given = Buffer.from(signature ?? '', 'base64url');
  const expected = mac(key, payload ?? '', scope);
  if (rest.length === 0 && given.length === expected.length && timingSafeEqual(given, expected)) {
    try {
      const parsed = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
      if (typeof parsed.t === 'string' && TIMESTAMP.test(parsed.t) && typeof parsed.i === 'string' && UUID.test(parsed.i)) {
        return { createdAt: parsed.t, id: parsed.i };
      }
    } catch {
      // fall through: signed by us, so this does not happen short of a bug
    }
  }
  throw invalid('invalid_cursor', 'The cursor is not one this service issued for this query; start again without it.', {
    errors: [{ location: 'request/query/cursor', message: 'is not a cursor issued for this query' }],
  });
}
