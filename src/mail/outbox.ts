// Writing a message to the outbox of mail, in the transaction of the change that causes it: the
// change and its message commit together or not at all, and nothing is sent before the commit
// (the sender reads only committed rows). A link's token is in the rendered parts only.
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { renderMessage, type Language, type MessageKind, type RenderedMessage, type Templates } from './templates.js';

export interface QueuedMessage<K extends MessageKind> {
  recipient: string;
  kind: K;
  language: Language;
  values: Templates[K];
  now: Date;
  /** What the message belongs to, so that it leaves the outbox when its link is spent. */
  invitationId?: string | null;
  passwordResetId?: string | null;
  userId?: string | null;
}

export async function queueMessage<K extends MessageKind>(db: Kysely<Database>, m: QueuedMessage<K>): Promise<void> {
  await queueRendered(db, { ...m, rendered: renderMessage(m.kind, m.language, m.values) });
}

/** A message a feature rendered itself (with `render`, src/mail/templates.ts); `kind` names it in the outbox. */
export interface RenderedQueuedMessage {
  recipient: string;
  kind: string;
  language: Language;
  rendered: RenderedMessage;
  now: Date;
  invitationId?: string | null;
  passwordResetId?: string | null;
  userId?: string | null;
}

export async function queueRendered(db: Kysely<Database>, m: RenderedQueuedMessage): Promise<void> {
  const { subject, text, html } = m.rendered;
  await db
    .insertInto('messages')
    .values({
      recipient: m.recipient,
      kind: m.kind,
      language: m.language,
      subject,
      body: text,
      html,
      invitation_id: m.invitationId ?? null,
      password_reset_id: m.passwordResetId ?? null,
      user_id: m.userId ?? null,
      created_at: m.now,
      next_attempt_at: m.now,
    })
    .execute();
}
