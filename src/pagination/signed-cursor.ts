// The opaque cursors of keyset pagination (GET /users, the audit journal), signed. A cursor is
// input, never trusted: it carries an HMAC-SHA256, keyed by the database's `cursor_signing` secret
// (src/auth/secrets/service-secrets.ts), over its position AND the scope it was made for (the list, its
// order and its filters). An edited cursor, or one made for another list or other filters, is
// refused with 400 invalid_cursor before its content is even parsed. Rotating the secret
// invalidates outstanding cursors, and nothing else.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalid } from '../errors.js';

/** The list, its order and its filters, as the query compares them: `JSON.stringify` must be stable. */
export type CursorScope = readonly unknown[];

const mac = (key: Buffer, payload: string, scope: CursorScope) => createHmac('sha256', key).update(`${payload}\n${JSON.stringify(scope)}`).digest();

export const invalidCursor = () =>
  invalid('invalid_cursor', 'The cursor is not one this service issued for this query; start again without it.', {
    errors: [{ location: 'request/query/cursor', message: 'is not a cursor issued for this query' }],
  });

export function sealCursor(key: Buffer, position: Record<string, string>, scope: CursorScope): string {
  const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${payload}.${mac(key, payload, scope).toString('base64url')}`;
}

/** The position a cursor carries, once its signature holds for this scope; else 400 invalid_cursor. */
export function openCursor(key: Buffer, value: string, scope: CursorScope): Record<string, unknown> {
  const [payload, signature, ...rest] = value.split('.');
  const given = Buffer.from(signature ?? '', 'base64url');
  const expected = mac(key, payload ?? '', scope);
  if (rest.length > 0 || given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
  try {
    const position = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as unknown;
    if (position !== null && typeof position === 'object' && !Array.isArray(position)) return position as Record<string, unknown>;
  } catch {
    // signed by us, so this does not happen short of a bug
  }
  throw invalidCursor();
}
