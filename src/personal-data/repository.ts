// Reading everything about one person, page by page: each statement takes a keyset position (the
// time and id of the last row read, to the microsecond) and answers the next rows in that order,
// so an export walks a long history in constant memory and each statement stays short (no
// transaction is held while the client reads). A row written during the walk may or may not be in
// the document, as with any paged read.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { isoMicros, isoMillis } from '../db/iso-time.js';
import type { Position } from '../pagination/position.js';

export type { Position };

const after = (time: string, id: string, position: Position | undefined, idType = 'uuid'): RawBuilder<boolean> =>
  position ? sql<boolean>`(${sql.ref(time)}, ${sql.ref(id)}) > (${position.at}::timestamptz, ${position.id}::${sql.raw(idType)})` : sql<boolean>`true`;

export function sessionsPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number) {
  return db
    .selectFrom('sessions')
    .select(['id', 'ip_address', 'user_agent', 'authentication_method', 'revoked_reason'])
    .select([
      isoMillis('created_at').as('created_at'),
      isoMillis('last_used_at').as('last_used_at'),
      isoMillis('expires_at').as('expires_at'),
      isoMillis('ended_at').as('ended_at'),
      isoMillis('revoked_at').as('revoked_at'),
      isoMicros('created_at').as('position_at'),
    ])
    .where('user_id', '=', userId)
    .where(after('created_at', 'id', position))
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/**
 * The person's own settings and what their row remembers of them beside the profile: the language
 * they chose for their messages, and how many devices they signed in from are known
 * (src/auth/sessions/devices.ts): a count, never the digests.
 */
export async function settingsOf(db: Kysely<Database>, userId: string): Promise<{ language: 'en' | 'fr' | null; known_devices: number }> {
  const row = await db
    .selectFrom('users')
    .select(['language', sql<number>`coalesce(cardinality(known_devices), 0)`.as('known_devices')])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row ?? { language: null, known_devices: 0 };
}

/** Authenticator apps and passkeys: names and times only, never a key, a public key or a counter. */
export function secondFactorsOf(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('second_factors')
    .select(['id', 'kind', 'name'])
    .select([isoMillis('created_at').as('created_at'), isoMillis('confirmed_at').as('confirmed_at'), isoMillis('last_used_at').as('last_used_at')])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The person's accounts at identity providers (issuer and subject: who they are there). */
export function identityLinksOf(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('identity_links')
    .select(['provider_id', 'issuer', 'subject'])
    .select([isoMillis('created_at').as('linked_at'), isoMillis('last_sign_in_at').as('last_sign_in_at')])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
}

/** The id a directory gave the person (SCIM externalId), if one did. */
export async function scimExternalIdOf(db: Kysely<Database>, userId: string): Promise<string | null> {
  return (await db.selectFrom('scim_external_ids').select('external_id').where('user_id', '=', userId).executeTakeFirst())?.external_id ?? null;
}

const invitationColumns = (db: Kysely<Database>) =>
  db
    .selectFrom('invitations')
    .select(['id', 'status', 'language'])
    .select([
      isoMillis('created_at').as('created_at'),
      isoMillis('expires_at').as('expires_at'),
      isoMillis('accepted_at').as('accepted_at'),
      isoMillis('revoked_at').as('revoked_at'),
      isoMicros('created_at').as('position_at'),
    ]);

/** Invitations accepted by the person (the ones that made the account). */
export function invitationsReceived(db: Kysely<Database>, userId: string) {
  return invitationColumns(db).where('user_id', '=', userId).orderBy('created_at').orderBy('id').execute();
}

export function invitationsSentPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number) {
  return invitationColumns(db).where('created_by_user_id', '=', userId).where(after('created_at', 'id', position)).orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** Keys the person created (or took over by rotating them): never a secret or a digest. */
export function apiKeysPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'permissions', 'last_used_ip'])
    .select([
      isoMillis('created_at').as('created_at'),
      isoMillis('expires_at').as('expires_at'),
      isoMillis('revoked_at').as('revoked_at'),
      isoMillis('last_used_at').as('last_used_at'),
      isoMicros('created_at').as('position_at'),
    ])
    .where('created_by', '=', userId)
    .where(after('created_at', 'id', position))
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export function tasksPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number) {
  return db
    .selectFrom('tasks')
    .select(['id', 'title'])
    .select((eb) => [eb('assignee_id', '=', userId).as('assignee'), eb('created_by_user_id', '=', userId).as('creator'), isoMicros('created_at').as('position_at')])
    .where((eb) => eb.or([eb('assignee_id', '=', userId), eb('created_by_user_id', '=', userId)]))
    .where(after('created_at', 'id', position))
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute();
}

export function meetingsPage(db: Kysely<Database>, userId: string, position: Position | undefined, limit: number) {
  return db
    .selectFrom('meetings as m')
    .select(['m.id', 'm.title'])
    .select((eb) => [
      eb('m.organizer_id', '=', userId).as('organizer'),
      eb.exists(eb.selectFrom('meeting_attendees as a').select('a.user_id').whereRef('a.meeting_id', '=', 'm.id').where('a.user_id', '=', userId)).as('attendee'),
      isoMicros('m.starts_at').as('position_at'),
    ])
    .where((eb) =>
      eb.or([eb('m.organizer_id', '=', userId), eb.exists(eb.selectFrom('meeting_attendees as a').select('a.user_id').whereRef('a.meeting_id', '=', 'm.id').where('a.user_id', '=', userId))]),
    )
    .where(after('m.starts_at', 'm.id', position))
    .orderBy('m.starts_at')
    .orderBy('m.id')
    .limit(limit)
    .execute();
}
