// This feature's tables, beside the code that reads them; `declare module` adds them to `Database` (src/db/schema.ts).
import type { Generated } from 'kysely';
import type { Nullable, Timestamp } from '../db/schema.js';

/** Password recovery links (src/password-resets): the token's SHA-256 digest only. */
export interface PasswordResetsTable {
  id: Generated<string>;
  user_id: string;
  token_digest: Buffer;
  language: Generated<'en' | 'fr'>;
  requested_by_user_id: Nullable<string>;
  created_at: Timestamp;
  expires_at: Date | string;
  spent_at: Nullable<Date | string>;
}

declare module '../db/schema.js' {
  interface Database {
    password_resets: PasswordResetsTable;
  }
}
