// Queries on passkeys (second_factors rows of kind 'passkey') and their WebAuthn challenges.
// Functions take the database or a transaction; times come from the caller's clock.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, SecondFactorsTable } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;
export type PasskeyRow = Selectable<SecondFactorsTable>;

/** What a person may see of a passkey. */
const LISTED = ['id', 'name', 'created_at', 'last_used_at', 'backup_eligible', 'backup_state'] as const;
export type ListedPasskey = Pick<PasskeyRow, (typeof LISTED)[number]>;

export function listPasskeys(db: Db, userId: string): Promise<ListedPasskey[]> {
  return db.selectFrom('second_factors').select(LISTED).where('user_id', '=', userId).where('kind', '=', 'passkey').orderBy('created_at').orderBy('id').execute();
}

/** The credential ids (and transports) of a person's passkeys, for allowCredentials and excludeCredentials. */
export function credentialsOf(db: Db, userId: string) {
  return db.selectFrom('second_factors').select(['credential_id', 'transports']).where('user_id', '=', userId).where('kind', '=', 'passkey').orderBy('created_at').orderBy('id').execute();
}

export async function countPasskeys(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('second_factors').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).where('kind', '=', 'passkey').executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A passkey by its credential id, locked until the transaction ends: two assertions of it are judged one after the other. */
export function lockPasskeyByCredential(trx: Transaction<Database>, credentialId: string): Promise<PasskeyRow | undefined> {
  return trx.selectFrom('second_factors').selectAll().where('credential_id', '=', credentialId).where('kind', '=', 'passkey').forUpdate().executeTakeFirst();
}

export interface NewPasskey {
  userId: string;
  name: string;
  credentialId: string;
  publicKey: Buffer;
  signCount: number;
  transports: string[];
  backupEligible: boolean;
  backupState: boolean;
  now: Date;
}

/** Stores a verified passkey; undefined when its credential id is registered already (to anyone). */
export function insertPasskey(db: Db, p: NewPasskey): Promise<ListedPasskey | undefined> {
  return db
    .insertInto('second_factors')
    .values({
      user_id: p.userId,
      kind: 'passkey',
      name: p.name,
      created_at: p.now,
      confirmed_at: p.now,
      credential_id: p.credentialId,
      public_key: p.publicKey,
      sign_count: p.signCount,
      transports: p.transports,
      backup_eligible: p.backupEligible,
      backup_state: p.backupState,
    })
    .onConflict((oc) => oc.column('credential_id').doNothing())
    .returning(LISTED)
    .executeTakeFirst();
}

/** After a verified assertion: the counter and backup state it reported, and the time. */
export async function notePasskeyUse(trx: Transaction<Database>, id: string, signCount: number, backupState: boolean, now: Date): Promise<void> {
  await trx.updateTable('second_factors').set({ sign_count: signCount, backup_state: backupState, last_used_at: now }).where('id', '=', id).execute();
}

/** One of the person's passkeys, locked until the transaction ends; undefined for anyone else's. */
export function lockOwnPasskey(trx: Transaction<Database>, userId: string, id: string): Promise<PasskeyRow | undefined> {
  return trx.selectFrom('second_factors').selectAll().where('id', '=', id).where('user_id', '=', userId).where('kind', '=', 'passkey').forUpdate().executeTakeFirst();
}

export function setPasskeyName(trx: Transaction<Database>, id: string, name: string): Promise<ListedPasskey> {
  return trx.updateTable('second_factors').set({ name }).where('id', '=', id).returning(LISTED).executeTakeFirstOrThrow();
}

export function deletePasskey(db: Db, userId: string, id: string): Promise<{ name: string | null } | undefined> {
  return db.deleteFrom('second_factors').where('id', '=', id).where('user_id', '=', userId).where('kind', '=', 'passkey').returning('name').executeTakeFirst();
}

/** How many live registration and sign-in challenges one client address (as the sign-in throttle counts it) holds: step-ups have their own budget. */
const liveAddressChallenges = (countedAddress: string, now: Date) =>
  sql<string>`(select count(*) from passkey_challenges c
    where c.counted_address = ${countedAddress} and c.purpose <> 'step_up' and c.expires_at > ${now})`;

/** Live registration and sign-in challenges held by one client address (putChallengeWithin's count). */
export async function liveChallengesFrom(db: Db, countedAddress: string, now: Date): Promise<number> {
  const row = await db.selectNoFrom(liveAddressChallenges(countedAddress, now).as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Keeps a step-up challenge unless its session already holds `max` live ones: the session's row
 * locked first, then one conditional insert counting under that lock, in the caller's transaction
 * (one connection). Two parallel requests of one session are counted one after the other, in every
 * process: the budget cannot be overrun. False when the budget is spent (or the session is gone).
 */
export async function putStepUpChallengeWithin(trx: Transaction<Database>, row: { challenge: string; user_id: string; session_id: string; counted_address: string; created_at: Date; expires_at: Date }, max: number): Promise<boolean> {
  const session = await trx.selectFrom('sessions').select('id').where('id', '=', row.session_id).forUpdate().executeTakeFirst();
  if (!session) return false;
  const result = await sql`
    insert into passkey_challenges (challenge, purpose, user_id, session_id, counted_address, created_at, expires_at)
    select ${row.challenge}, 'step_up', ${row.user_id}, ${row.session_id}, ${row.counted_address}, ${row.created_at}, ${row.expires_at}
    where (select count(*) from passkey_challenges c
           where c.session_id = ${row.session_id} and c.purpose = 'step_up' and c.expires_at > ${row.created_at}) < ${max}`.execute(trx);
  return Number(result.numAffectedRows ?? 0) === 1;
}

/**
 * Keeps a registration's or a passwordless sign-in's challenge unless its client address already
 * holds `max` live ones (step-ups are counted on their session instead): false when the budget is
 * spent. There is no session (nor any row) to lock here, so the count and the insert happen under a
 * transaction-scoped advisory lock on the address (class 4; the sign-in throttle uses 1 and 2,
 * step-up refusals 3), in the caller's transaction: parallel begins from one address are counted
 * one after the other, in every process. The conditional insert alone would not do: under READ
 * COMMITTED each statement counts without the others' uncommitted rows, so they all see room.
 */
export async function putChallengeWithin(trx: Transaction<Database>, row: { challenge: string; purpose: 'registration' | 'sign_in'; user_id: string | null; counted_address: string; created_at: Date; expires_at: Date }, max: number): Promise<boolean> {
  await sql`select pg_advisory_xact_lock(4, hashtext(${row.counted_address}))`.execute(trx);
  const result = await sql`
    insert into passkey_challenges (challenge, purpose, user_id, session_id, counted_address, created_at, expires_at)
    select ${row.challenge}, ${row.purpose}, ${row.user_id}, null, ${row.counted_address}, ${row.created_at}, ${row.expires_at}
    where ${liveAddressChallenges(row.counted_address, row.created_at)} < ${max}`.execute(trx);
  return Number(result.numAffectedRows ?? 0) === 1;
}

/**
 * Uses a challenge up: deleted whatever comes next, so it is good once. Only a challenge of this
 * purpose and person (null: a passwordless sign-in) is taken, and for a step-up only one of this
 * session (another session's is left alone); `live` says whether it was still good.
 */
export async function takeChallenge(
  db: Db,
  challenge: string,
  purpose: 'registration' | 'sign_in' | 'step_up',
  userId: string | null,
  now: Date,
  sessionId: string | null = null,
): Promise<{ live: boolean } | undefined> {
  const row = await db
    .deleteFrom('passkey_challenges')
    .where('challenge', '=', challenge)
    .where('purpose', '=', purpose)
    .where((eb) => (userId === null ? eb('user_id', 'is', null) : eb('user_id', '=', userId)))
    .where((eb) => (sessionId === null ? eb('session_id', 'is', null) : eb('session_id', '=', sessionId)))
    .returning('expires_at')
    .executeTakeFirst();
  return row && { live: row.expires_at > now };
}
