// The cursor of the audit journal: the (occurred_at, id) of the last event of a page, occurred_at
// as PostgreSQL prints it to the microsecond (as src/users/cursor.ts), signed for the filters of
// the query (src/pagination/signed-cursor.ts): GET /me/audit-events binds it to the person too.
import { invalidCursor, openCursor, sealCursor } from '../pagination/signed-cursor.js';
import type { AuditCursor, AuditFilter } from './repository.js';
import { ISO_MICROS } from '../db/iso-time.js';

const ID = /^[1-9]\d{0,18}$/;

/** The list and its order, then every filter in a fixed order (absent ones as null). */
const scopeOf = (f: AuditFilter) => [
  'audit_events',
  'occurred_at,id',
  f.types ? [...f.types].sort() : null,
  f.actorType ?? null,
  f.actorId ?? null,
  f.targetType ?? null,
  f.targetId ?? null,
  f.userId ?? null,
  f.involving ?? null,
  f.since?.toISOString() ?? null,
  f.before?.toISOString() ?? null,
];

export function encodeAuditCursor(key: Buffer, cursor: AuditCursor, filter: AuditFilter): string {
  return sealCursor(key, { t: cursor.occurredAt, i: cursor.id }, scopeOf(filter));
}

export function decodeAuditCursor(key: Buffer, value: string, filter: AuditFilter): AuditCursor {
  const { t, i } = openCursor(key, value, scopeOf(filter));
  if (typeof t === 'string' && ISO_MICROS.test(t) && typeof i === 'string' && ID.test(i)) return { occurredAt: t, id: i };
  throw invalidCursor();
}
