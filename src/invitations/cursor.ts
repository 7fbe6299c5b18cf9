// The cursor of GET /invitations: the creation time (to the microsecond, as PostgreSQL prints it)
// and id of the last invitation of a page, signed for the list (src/pagination/signed-cursor.ts).
import { invalidCursor, openCursor, sealCursor } from '../pagination/signed-cursor.js';
import { UUID } from '../uuid.js';
import { ISO_MICROS } from '../db/iso-time.js';

export interface InvitationCursor {
  key: string;
  id: string;
}

const SCOPE = ['invitations', 'created_at desc,id desc'];

export function encodeCursor(key: Buffer, cursor: InvitationCursor): string {
  return sealCursor(key, { k: cursor.key, i: cursor.id }, SCOPE);
}

export function decodeCursor(key: Buffer, value: string): InvitationCursor {
  const { k, i } = openCursor(key, value, SCOPE);
  if (typeof k === 'string' && ISO_MICROS.test(k) && typeof i === 'string' && UUID.test(i)) return { key: k, id: i };
  throw invalidCursor();
}
