// Queries on sessions and their token sets. Functions take the database or a transaction; times
// come from the caller's clock, never from SQL now().
import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Database, SessionsTable } from '../db/schema.js';
import { sessionIsLive, type Liveness } from './liveness.js';

type Db = Kysely<Database> | Transaction<Database>;
export type SessionRow = Selectable<SessionsTable>;

export async function insertTokenSet(
  db: Db,
  values: { sessionId: string; generation: number; accessDigest: Buffer; refreshDigest: Buffer; now: Date },
): Promise<void> {
  await db
    .insertInto('session_tokens')
    .values({
      session_id: values.sessionId,
      generation: values.generation,
      access_digest: values.accessDigest,
      refresh_digest: values.refreshDigest,
      issued_at: values.now,
    })
    .execute();
}

/** The token set a refresh token belongs to, with its session and user, locked until the transaction ends. */
export async function lockByRefreshDigest(trx: Transaction<Database>, refreshDigest: Buffer) {
  return trx
    .selectFrom('session_tokens as t')
    .innerJoin('sessions as s', 's.id', 't.session_id')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select([
      't.id as token_id',
      't.used_at',
      't.successor_sealed',
      's.id as session_id',
      's.user_id',
      's.generation',
      's.expires_at',
      's.last_used_at',
      's.ended_at',
      's.revoked_at',
      'u.status as user_status',
    ])
    .where('t.refresh_digest', '=', refreshDigest)
    .forUpdate(['s', 't'])
    .executeTakeFirst();
}

export async function sessionIdOfAccessDigest(db: Db, accessDigest: Buffer): Promise<string | undefined> {
  const row = await db.selectFrom('session_tokens').select('session_id').where('access_digest', '=', accessDigest).executeTakeFirst();
  return row?.session_id;
}

export async function markRefreshUsed(db: Db, tokenId: string, now: Date, successorSealed: Buffer): Promise<void> {
  await db.updateTable('session_tokens').set({ used_at: now, successor_sealed: successorSealed }).where('id', '=', tokenId).execute();
}

export async function advanceSession(db: Db, sessionId: string, generation: number, now: Date): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ generation, refreshed_at: now, last_used_at: now })
    .where('id', '=', sessionId)
    .execute();
}

export async function userExists(db: Db, userId: string): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst()) !== undefined;
}

/** Live sessions of a user, most recently used first. */
export async function listLiveSessions(db: Db, userId: string, at: Liveness): Promise<SessionRow[]> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('user_id', '=', userId)
    .where(sessionIsLive('sessions', at))
    .orderBy('last_used_at', 'desc')
    .orderBy('id')
    .execute();
}

export async function findLiveSession(db: Db, sessionId: string, at: Liveness): Promise<SessionRow | undefined> {
  return db
    .selectFrom('sessions')
    .selectAll()
    .where('id', '=', sessionId)
    .where(sessionIsLive('sessions', at))
    .executeTakeFirst();
}

/** Revokes the matching live sessions; returns the ids revoked. */
export async function revokeSessions(
  db: Db,
  where: { userId: string; sessionId?: string; exceptSessionId?: string },
  now: Date,
  reason: string,
): Promise<string[]> {
  let query = db
    .updateTable('sessions')
    .set({ revoked_at: now, revoked_reason: reason })
    .where('user_id', '=', where.userId)
    .where('revoked_at', 'is', null)
    .where('ended_at', 'is', null);
  if (where.sessionId) query = query.where('id', '=', where.sessionId);
  if (where.exceptSessionId) query = query.where('id', '!=', where.exceptSessionId);
  const rows = await query.returning('id').execute();
  return rows.map((r) => r.id);
}

export async function endSession(db: Db, sessionId: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ ended_at: now })
    .where('id', '=', sessionId)
    .where('ended_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Opens a session with its first token set, notes the sign-in on the user, records the event (the
 * user acting, on the new session: src/audit) and runs `clearThrottle` (the throttle's statement
 * that forgets the failures of this e-mail from this address), in one
 * statement (one round trip, atomic): sign-in throughput is what the benchmark measures.
 */
export async function openSession(
  db: Db,
  v: {
    userId: string;
    ip: string;
    userAgent: string;
    now: Date;
    expiresAt: Date;
    accessDigest: Buffer;
    refreshDigest: Buffer;
    clearThrottle: RawBuilder<unknown>;
    requestId?: string | null;
  },
): Promise<string> {
  const { rows } = await sql<{ id: string }>`
    with s as (
      insert into sessions (user_id, ip_address, user_agent, created_at, last_used_at, expires_at)
      values (${v.userId}, ${v.ip}, ${v.userAgent}, ${v.now}, ${v.now}, ${v.expiresAt})
      returning id, generation
    ), t as (
      insert into session_tokens (session_id, generation, access_digest, refresh_digest, issued_at)
      select id, generation, ${v.accessDigest}, ${v.refreshDigest}, ${v.now} from s
    ), u as (
      update users set last_sign_in_at = ${v.now} where id = ${v.userId}
    ), e as (
      insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent,
        actor_type, actor_id, actor_label, target_type, target_id, target_label, request_id)
      select 'sign_in_succeeded', ${v.now}, ${v.userId}, s.id, ${v.ip}, ${v.userAgent},
        'user', ${v.userId}, n.name, 'session', s.id, n.name, ${v.requestId ?? null}
      from s, (select first_name || ' ' || last_name as name from users where id = ${v.userId}) n
    ), c as (
      ${v.clearThrottle}
    )
    select id from s`.execute(db);
  return rows[0]!.id;
}
