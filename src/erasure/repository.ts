// The statements of an erasure (docs/ERASURE.md): what is deleted, what is scrubbed, the tombstone.
// Each takes the erasure's transaction; the person's row is locked by then.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { wholeAddressPattern } from '../text/addresses.js';

/** The e-mail a tombstone keeps (the column is unique and required): of the reserved `.invalid` domain, naming nobody. */
export const tombstoneEmail = (id: string) => `erased-${id}@erased.invalid`;

export interface Person {
  id: string;
  email: string;
  email_key: string;
  first_name: string;
  last_name: string;
}

/** A text holds the person's e-mail only as a whole address (src/text/addresses.ts). */
const namesByAddress = (person: Person) => wholeAddressPattern(person.email);

const count = (result: { numAffectedRows?: bigint } | { numDeletedRows: bigint } | { numUpdatedRows: bigint }) =>
  Number('numDeletedRows' in result ? result.numDeletedRows : 'numUpdatedRows' in result ? result.numUpdatedRows : (result.numAffectedRows ?? 0));

/** Everything the person signs in with or was signed in by: deleted. The counts, by what. */
export async function deleteSignInMeans(trx: Kysely<Database>, person: Person, emailDigest: Buffer) {
  const byUser = async (table: 'second_factors' | 'recovery_codes' | 'sign_in_challenges' | 'passkey_challenges' | 'second_factor_code_failures' | 'identity_links' | 'scim_external_ids' | 'user_roles' | 'password_resets') =>
    count(await trx.deleteFrom(table).where('user_id', '=', person.id).executeTakeFirst());
  // Sessions take their token sets, step-up refusals and step-up challenges with them (cascade).
  const sessions = count(await trx.deleteFrom('sessions').where('user_id', '=', person.id).executeTakeFirst());
  const second_factors = await byUser('second_factors');
  const recovery_codes = await byUser('recovery_codes');
  await byUser('sign_in_challenges');
  await byUser('passkey_challenges');
  await byUser('second_factor_code_failures');
  const identity_links = await byUser('identity_links');
  const scim_ids = await byUser('scim_external_ids');
  const roles = await byUser('user_roles');
  // Their recovery links (digests only); the messages carrying them go with their other messages.
  await byUser('password_resets');
  // The throttle's failed attempts of their e-mail (counted by its digest, with the address).
  await trx.deleteFrom('sign_in_failures').where('email_digest', '=', emailDigest).execute();
  return { sessions, second_factors, recovery_codes, identity_links, scim_ids, roles };
}

/**
 * Invitations to their address (or that made them): deleted. Messages to them, of those
 * invitations, of the invitations they sent (whose text names them as the inviter) or holding
 * their address: deleted. No body is searched for their name: template text and namesakes would
 * match it (docs/ERASURE.md).
 */
export async function deleteInvitationsAndMessages(trx: Kysely<Database>, person: Person) {
  const invitations = await trx
    .selectFrom('invitations')
    .select('id')
    .where((eb) => eb.or([eb('email_key', '=', person.email_key), eb('user_id', '=', person.id)]))
    .execute();
  const ids = invitations.map((i) => i.id);
  const messages = count(
    await trx
      .deleteFrom('messages')
      .where((eb) =>
        eb.or([
          eb(sql<string>`lower(recipient)`, '=', person.email.toLowerCase()),
          eb('user_id', '=', person.id),
          ...(ids.length > 0 ? [eb('invitation_id', 'in', ids)] : []),
          eb('invitation_id', 'in', eb.selectFrom('invitations').select('id').where('created_by_user_id', '=', person.id)),
          eb('body', '~*', namesByAddress(person)),
        ]),
      )
      .executeTakeFirst(),
  );
  if (ids.length > 0) await trx.deleteFrom('invitations').where('id', 'in', ids).execute();
  return { invitations: ids.length, messages };
}

/** The API keys they created stop for good (they already stopped when the person was disabled). */
export async function revokeKeysCreatedBy(trx: Kysely<Database>, personId: string, at: Date): Promise<number> {
  return count(await trx.updateTable('api_keys').set({ revoked_at: at, updated_at: at }).where('created_by', '=', personId).where('revoked_at', 'is', null).executeTakeFirst());
}

/** Answers kept for an Idempotency-Key that show the person (a create's answer, by their id or address): deleted. */
export async function deleteKeptAnswers(trx: Kysely<Database>, person: Person): Promise<number> {
  return count(
    await trx
      .deleteFrom('idempotency_keys')
      .where((eb) => eb.or([eb('body', 'like', `%${person.id}%`), eb('body', '~*', namesByAddress(person))]))
      .executeTakeFirst(),
  );
}

/** Stored public events that show the person (their id) or hold their address, with their payloads. */
export function eventsNaming(trx: Kysely<Database>, person: Person) {
  return trx
    .selectFrom('events')
    .select(['id', 'payload'])
    .where((eb) => eb.or([eb(sql<string>`payload::text`, 'like', `%${person.id}%`), eb(sql<string>`payload::text`, '~*', namesByAddress(person))]))
    .forUpdate()
    .execute();
}

export async function replacePayload(trx: Kysely<Database>, id: string, payload: Record<string, unknown>): Promise<void> {
  await trx.updateTable('events').set({ payload: JSON.stringify(payload) }).where('id', '=', id).execute();
  // What the partner answered may echo the payload: it goes with it.
  await trx.updateTable('webhook_deliveries').set({ last_response: null, last_error: null }).where('event_id', '=', id).execute();
}

/** The tombstone: no name, an e-mail naming nobody, no password, no known devices nor language, disabled, erased. */
export async function makeTombstone(trx: Kysely<Database>, id: string, email: { email: string; key: string }, at: Date): Promise<void> {
  await trx
    .updateTable('users')
    .set({
      email: email.email,
      email_key: email.key,
      first_name: '',
      last_name: '',
      password_hash: null,
      must_change_password: false,
      status: 'disabled',
      last_sign_in_at: null,
      known_devices: null,
      known_devices_key_id: null,
      language: null,
      erased_at: at,
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
}

export function lockPerson(trx: Kysely<Database>, id: string) {
  return trx.selectFrom('users').select(['id', 'email', 'email_key', 'first_name', 'last_name', 'status', 'erased_at']).where('id', '=', id).forUpdate().executeTakeFirst();
}
