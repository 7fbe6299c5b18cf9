// Security notices: the audit events that tell a person something changed on their account are
// followed by a message to them, written by the recorder in the same transaction (the audit event
// is the hook for everything that follows a write: docs/RESOURCES.md). One statement, which reads
// the person's address and language where it is, renders nothing it does not need to (both
// languages are rendered here, the statement picks one) and writes nothing for an event without a
// person. The person's language: personLanguage (their setting, else their last link's, else
// English). The notice of a sign-in from a new device is
// written by the sign-in's own statement, through the same insert (src/auth/sessions/devices.ts).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { renderMessage, type Language, type MessageKind, type RenderedMessage, type Templates } from './templates.js';
import { isoMillis } from '../db/iso-time.js';

/** What the recorder hands over of an audit event. */
export interface NoticeSource {
  type: string;
  at: Date;
  userId?: string | null;
  target?: { label?: unknown } | null;
  details?: Record<string, unknown>;
  changes?: { before: Record<string, unknown> | null; after: Record<string, unknown> | null } | null;
}

type Notice = { [K in MessageKind]: { kind: K; values: Templates[K] } }[MessageKind];

const sameList = (a: unknown, b: unknown) => JSON.stringify([...((a as string[]) ?? [])].sort()) === JSON.stringify([...((b as string[]) ?? [])].sort());

/** The notice an audit event calls for, if any. */
export function noticeFor(event: NoticeSource): Notice | undefined {
  const at = event.at;
  const method = String(event.details?.method ?? '');
  switch (event.type) {
    case 'password_changed':
      return { kind: 'password_changed', values: { at, through: 'change' } };
    case 'second_factor_enrolled':
      return { kind: 'second_factor_added', values: { at, method } };
    case 'second_factor_removed':
      return { kind: 'second_factor_removed', values: { at, method } };
    case 'second_factors_reset':
      return { kind: 'second_factors_reset', values: { at } };
    case 'api_key_created':
      return { kind: 'api_key_created', values: { at, name: typeof event.target?.label === 'string' ? event.target.label : '' } };
    case 'user_disabled':
      return { kind: 'account_disabled', values: { at } };
    case 'user_updated': {
      const before = event.changes?.before?.roles;
      const after = event.changes?.after?.roles;
      if (after === undefined || sameList(before, after)) return undefined;
      return { kind: 'roles_changed', values: { at, roles: (after as string[]) ?? [] } };
    }
    default:
      return undefined;
  }
}

/**
 * The kinds that are security notices, as `GET /me/notices` lists them. `new_device_sign_in` is
 * written by the sign-in's own statement (src/auth/sessions/repository.ts), not from an audit event.
 */
export const NOTICE_KINDS: readonly MessageKind[] = ['password_changed', 'second_factor_added', 'second_factor_removed', 'second_factors_reset', 'api_key_created', 'account_disabled', 'roles_changed', 'new_device_sign_in'];

/**
 * The language of the messages to a person, as SQL over `user`, the alias of a row with their `id`
 * and `language` (users'): the one they chose (PATCH /me), else that of the last link they were
 * sent (a recovery link, the invitation they accepted), else English.
 */
export function personLanguage(user: string): RawBuilder<Language> {
  const id = sql.ref(`${user}.id`);
  return sql<Language>`coalesce(
        ${sql.ref(`${user}.language`)},
        (select r.language from password_resets r where r.user_id = ${id} order by r.created_at desc limit 1),
        (select i.language from invitations i where i.user_id = ${id} limit 1),
        'en')`;
}

/** A notice in both languages (values, or a fixed statement's placeholders for them). */
export interface NoticeTexts {
  en: RenderedMessage;
  fr: RenderedMessage;
}

/**
 * The INSERT of a notice of `kind` into the outbox, for a statement that writes it beside the
 * change: one message to each person of `from` (a select naming `id`, `email` and `language`),
 * in that language.
 */
export function insertNotice(kind: MessageKind, texts: NoticeTexts, at: unknown, from: RawBuilder<unknown>): RawBuilder<unknown> {
  const { en, fr } = texts;
  return sql`
    insert into messages (recipient, kind, language, subject, body, html, user_id, created_at, next_attempt_at)
    select p.email, ${kind}, p.language,
      case p.language when 'fr' then ${fr.subject} else ${en.subject} end,
      case p.language when 'fr' then ${fr.text} else ${en.text} end,
      case p.language when 'fr' then ${fr.html} else ${en.html} end,
      p.id, ${at}::timestamptz, ${at}::timestamptz
    from (${from}) p`;
}

/** Writes the notice the event calls for to the outbox, to its person; nothing when there is none. */
export async function queueNotice(db: Kysely<Database>, event: NoticeSource): Promise<void> {
  if (!event.userId) return;
  const notice = noticeFor(event);
  if (!notice) return;
  const texts = { en: renderMessage(notice.kind, 'en', notice.values as never), fr: renderMessage(notice.kind, 'fr', notice.values as never) };
  const person = sql`select u.id, u.email, ${personLanguage('u')} as language from users u where u.id = ${event.userId}::uuid`;
  await insertNotice(notice.kind, texts, event.at, person).execute(db);
}

/** The person's notices, newest first, as `GET /me/notices` shows them. */
export function listNotices(db: Kysely<Database>, userId: string, limit = 50) {
  return db
    .selectFrom('messages')
    .select(['id', 'kind', 'language', 'subject', 'body as text'])
    .select([isoMillis('created_at').as('created_at'), isoMillis('sent_at').as('sent_at')])
    .where('user_id', '=', userId)
    .where('kind', 'in', NOTICE_KINDS)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
