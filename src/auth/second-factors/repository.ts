// Queries on second factors and recovery codes. Functions take the database or a transaction;
// times come from the caller's clock.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, SecondFactorsTable } from '../../db/schema.js';
import { rolesRequireSecondFactor } from '../second-factor.js';

type Db = Kysely<Database> | Transaction<Database>;
export type SecondFactorRow = Selectable<SecondFactorsTable>;

/** A role of the person requires a second factor (docs/AUTH.md, "The policy"); the admin role's counts only when `adminRequired`. */
export async function rolesRequireSecondFactorOf(db: Db, userId: string, adminRequired: boolean): Promise<boolean> {
  const { rows } = await sql<{ required: boolean }>`select ${rolesRequireSecondFactor(sql`${userId}::uuid`, adminRequired)} as required`.execute(db);
  return rows[0]?.required ?? false;
}

export function findTotp(db: Db, userId: string): Promise<SecondFactorRow | undefined> {
  return db.selectFrom('second_factors').selectAll().where('user_id', '=', userId).where('kind', '=', 'totp').executeTakeFirst();
}

/** The TOTP row, locked until the transaction ends: two codes checked at once are judged one after the other. */
export function lockTotp(trx: Transaction<Database>, userId: string): Promise<SecondFactorRow | undefined> {
  return trx.selectFrom('second_factors').selectAll().where('user_id', '=', userId).where('kind', '=', 'totp').forUpdate().executeTakeFirst();
}

/** Replaces an unconfirmed TOTP key (never a confirmed one). False when a confirmed one is in the way. */
export async function putPendingTotp(db: Db, userId: string, sealed: Buffer, keyId: string, now: Date): Promise<boolean> {
  const row = await db
    .insertInto('second_factors')
    .values({ user_id: userId, kind: 'totp', created_at: now, totp_secret_sealed: sealed, totp_key_id: keyId })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .where('kind', '=', sql.lit('totp'))
        .doUpdateSet({ totp_secret_sealed: sealed, totp_key_id: keyId, created_at: now, totp_last_step: null, last_used_at: null })
        .where('second_factors.confirmed_at', 'is', null),
    )
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Accepts a code of time step `step` for the TOTP factor `id`: only a step later than the last one
 * accepted, so a code is good once (RFC 6238 section 5.2). False for a replay.
 */
export async function acceptTotpStep(db: Db, id: string, step: number, now: Date, confirm: boolean): Promise<boolean> {
  const result = await db
    .updateTable('second_factors')
    .set({ totp_last_step: step, last_used_at: confirm ? null : now, ...(confirm ? { confirmed_at: now } : {}) })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteTotp(db: Db, userId: string): Promise<SecondFactorRow | undefined> {
  return db.deleteFrom('second_factors').where('user_id', '=', userId).where('kind', '=', 'totp').returningAll().executeTakeFirst();
}

export async function countConfirmedFactors(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('second_factors').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).where('confirmed_at', 'is not', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function countUnusedRecoveryCodes(db: Db, userId: string): Promise<number> {
  const row = await db.selectFrom('recovery_codes').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', userId).where('used_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Replaces every recovery code of the user (used or not) with these digests, keyed under the sealing key `keyId`. */
export async function replaceRecoveryCodes(db: Db, userId: string, digests: Buffer[], keyId: string | null, now: Date): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  if (digests.length > 0) await db.insertInto('recovery_codes').values(digests.map((digest) => ({ user_id: userId, digest, key_id: keyId, created_at: now }))).execute();
}

/** Uses a recovery code up: true once for each code, never again. `digests`: the code's digest under each configured key, by key id. */
export async function useRecoveryCode(db: Db, userId: string, digests: { keyId: string; digest: Buffer }[], now: Date): Promise<boolean> {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('user_id', '=', userId)
    .where((eb) => eb.or(digests.map(({ keyId, digest }) => eb.and([eb('key_id', '=', keyId), eb('digest', '=', digest)]))))
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Wrong authenticator-app codes of the person since `since` (the daily cap, docs/AUTH.md). */
export async function countCodeFailures(db: Db, userId: string, since: Date): Promise<number> {
  const row = await db
    .selectFrom('second_factor_code_failures')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('user_id', '=', userId)
    .where('failed_at', '>', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function recordCodeFailure(db: Db, userId: string, now: Date): Promise<void> {
  await db.insertInto('second_factor_code_failures').values({ user_id: userId, failed_at: now }).execute();
}

/** When the cap stops holding: the `cap`-th newest failure since `since` leaves the window then; null below the cap. */
export async function capLiftsAt(db: Db, userId: string, since: Date, cap: number, windowMs: number): Promise<Date | null> {
  const row = await db
    .selectFrom('second_factor_code_failures')
    .select('failed_at')
    .where('user_id', '=', userId)
    .where('failed_at', '>', since)
    .orderBy('failed_at', 'desc')
    .offset(cap - 1)
    .limit(1)
    .executeTakeFirst();
  return row ? new Date(new Date(row.failed_at).getTime() + windowMs) : null;
}
