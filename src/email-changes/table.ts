// This feature's tables, beside the code that reads them; `declare module` adds them to `Database` (src/db/schema.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullable, Timestamp } from '../db/schema.js';

/** A pending change of a person's address: the new one, and the digest of its link's token. */
export interface EmailChangesTable {
  id: Generated<string>;
  user_id: string;
  new_email: string;
  token_digest: Buffer;
  language: ColumnType<'en' | 'fr', 'en' | 'fr' | undefined, 'en' | 'fr'>;
  created_at: Timestamp;
  expires_at: Date | string;
  spent_at: Nullable<Date | string>;
}

declare module '../db/schema.js' {
  interface Database {
    email_changes: EmailChangesTable;
  }
}
