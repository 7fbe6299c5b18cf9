// The opaque cursor of the audit journal's keyset pagination: the (occurred_at, id) of the last
// event of a page, occurred_at as PostgreSQL prints it to the microsecond (as src/users/cursor.ts).
// Same shape as the users' cursor, so both can move to one signed format together.
import { invalid } from '../errors.js';

export interface AuditCursor {
  occurredAt: string;
  id: string;
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;
const ID = /^[1-9]\d{0,18}$/;

export function encodeAuditCursor(cursor: AuditCursor): string {
  return Buffer.from(JSON.stringify({ t: cursor.occurredAt, i: cursor.id })).toString('base64url');
}

export function decodeAuditCursor(value: string): AuditCursor {
  try {
    const parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as { t?: unknown; i?: unknown };
    if (typeof parsed.t === 'string' && TIMESTAMP.test(parsed.t) && typeof parsed.i === 'string' && ID.test(parsed.i)) {
      return { occurredAt: parsed.t, id: parsed.i };
    }
  } catch {
    // fall through: not base64url JSON
  }
  throw invalid('invalid_cursor', 'The cursor is not one this service issued; start again without it.', {
    errors: [{ location: 'request/query/cursor', message: 'is not a valid cursor' }],
  });
}
