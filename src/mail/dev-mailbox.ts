// The development mailbox: with no SMTP_URL outside production, the outbox of mail is read here by
// administrators in the back office (clearly marked as such), links included, so that a newcomer
// on `make run` can follow an invitation or a recovery link. It never exists in production
// (src/config.ts refuses MAIL_DEV_MAILBOX there) and is served outside the contract
// (src/http/dev-mailbox.ts; docs/MAIL.md says why).
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { isoMillis } from '../db/iso-time.js';

export interface MailboxMessage {
  id: string;
  recipient: string;
  kind: string;
  language: string;
  subject: string;
  text: string;
  html: string | null;
  created_at: string;
}

export function devMailbox(db: Kysely<Database>) {
  return {
    /** The newest messages first, every one the outbox holds (a development database's). */
    async latest(limit: number): Promise<MailboxMessage[]> {
      return db
        .selectFrom('messages')
        .select(['id', 'recipient', 'kind', 'language', 'subject', 'body as text', 'html'])
        .select(isoMillis('created_at').as('created_at'))
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit)
        .execute();
    },
  };
}
