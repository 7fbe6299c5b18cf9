// The cursor of GET /identity-providers: the name key and id of the last provider of a page,
// signed for the list and its order (src/pagination/signed-cursor.ts). The list has no filter.
import { invalidCursor, openCursor, sealCursor } from '../../pagination/signed-cursor.js';
import { UUID } from '../../uuid.js';

export interface ProviderCursor {
  key: string;
  id: string;
}

const SCOPE = ['identity_providers', 'name_key,id'];

export const encodeCursor = (key: Buffer, cursor: ProviderCursor): string => sealCursor(key, { k: cursor.key, i: cursor.id }, SCOPE);

export function decodeCursor(key: Buffer, value: string): ProviderCursor {
  const { k, i } = openCursor(key, value, SCOPE);
  if (typeof k === 'string' && typeof i === 'string' && UUID.test(i)) return { key: k, id: i };
  throw invalidCursor();
}
