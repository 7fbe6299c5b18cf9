// This feature's tables, beside the code that reads them; `declare module` adds them to `Database` (src/db/schema.ts).
import type { ColumnType, Generated } from 'kysely';
import type { Nullable, Timestamp } from '../db/schema.js';

/** Invitations by e-mail (src/invitations); only the digest of the link's token is kept. */
export interface InvitationsTable {
  id: Generated<string>;
  email: string;
  email_key: string;
  role_ids: ColumnType<string[], string[] | undefined, string[]>;
  language: ColumnType<'en' | 'fr', 'en' | 'fr' | undefined, 'en' | 'fr'>;
  status: ColumnType<'pending' | 'accepted' | 'revoked', 'pending' | undefined, 'pending' | 'accepted' | 'revoked'>;
  token_digest: Buffer;
  expires_in_days: number;
  expires_at: Timestamp;
  user_id: Nullable<string>;
  accepted_at: Nullable<Date | string>;
  revoked_at: Nullable<Date | string>;
  created_by_user_id: Nullable<string>;
  created_by_api_key_id: Nullable<string>;
  created_at: Timestamp;
  updated_at: Timestamp;
  version: ColumnType<number, never, number>;
}

declare module '../db/schema.js' {
  interface Database {
    invitations: InvitationsTable;
  }
}
