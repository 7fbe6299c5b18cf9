// Queries on sessions and their token sets. Functions take the database or a transaction; times
// come from the caller's clock, never from SQL now().
import { unauthenticated } from '../../errors.js';
import { createHash } from 'node:crypto';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { AuthenticationMethod, Database, SessionsTable } from '../../db/schema.js';
import { sessionIsLive, type Liveness } from './liveness.js';
import { fixedStatement } from '../../db/fixed-statement.js';
import { ADMIN_ROLE_ID } from '../permissions.js';
import { hasSecondFactor, rolesRequireSecondFactor } from '../second-factor.js';
import { KNOWN_DEVICES_KEPT, newDeviceNotice, type DeviceSighting } from './devices.js';

type Db = Kysely<Database> | Transaction<Database>;
export type SessionRow = Selectable<SessionsTable>;

/** What a bearer request needs to know about its access token's session and user. */
export interface BearerSession {
  session_id: string;
  user_id: string;
  /** The session's last use is older than `touchBefore`: note this one (touchSession). */
  stale: boolean;
  /** The password was set by someone else and must be changed first. */
  must_change_password: boolean;
  /** A role of the user requires a second factor (the admin role's only under ADMIN_SECOND_FACTOR=required), and none is enrolled. */
  second_factor_missing: boolean;
  /**
   * `[EVERY_PERMISSION]` when the user holds the built-in admin role, which counts as every
   * permission of the catalogue; else the permissions of the user's roles, which may repeat one
   * that two roles give.
   */
  permissions: string[];
}

/**
 * Stands for the admin role's "every permission" in the bearer lookup. Not a permission name (a
 * role can only hold the catalogue's), so only the admin branch can produce it: anything else the
 * statement could return (no roles, an empty or null array) grants nothing, it fails closed.
 */
export const EVERY_PERMISSION = '*';

/**
 * The session of an access token, in ONE statement run on every bearer request (compiled once;
 * bench/ runs the same text): the token is younger than `issuedAfter`, its session neither
 * revoked, signed out, past its lifetime nor idle, the user active; with the user's permissions.
 * Read only: noting the last use is touchSession's, once a minute (bench/statements.ts: an UPDATE
 * in this statement cost PostgreSQL a sixth more on every call).
 * An administrator's permissions are not read: the admin role stands for all of them, and reading
 * them was a subquery run on every request for a result thrown away (bench/statements.ts).
 */
export const bearerSession = fixedStatement(
  (_db, p: { accessDigest: Buffer; issuedAfter: Date; now: Date; idleCutoff: Date; touchBefore: Date; adminsNeedSecondFactor: boolean }) => sql<BearerSession>`
    select s.id as session_id, s.user_id, s.last_used_at < ${p.touchBefore} as stale, u.must_change_password,
      (${rolesRequireSecondFactor('s.user_id', p.adminsNeedSecondFactor)} and not ${hasSecondFactor('s.user_id')}) as second_factor_missing,
      case when a.admin then array[${sql.lit(EVERY_PERMISSION)}] else array(
        select rp.permission from user_roles ur join role_permissions rp on rp.role_id = ur.role_id
        where ur.user_id = s.user_id
      ) end as permissions
    from session_tokens t
    join sessions s on s.id = t.session_id
    join users u on u.id = s.user_id
    cross join lateral (select exists (
      select 1 from user_roles ur where ur.user_id = s.user_id and ur.role_id = ${sql.lit(ADMIN_ROLE_ID)}
    ) as admin) a
    where t.access_digest = ${p.accessDigest}
      and t.issued_at > ${p.issuedAfter}
      and ${sessionIsLive('s', { now: p.now, idleCutoff: p.idleCutoff })}
      and u.status = 'active'`,
);

/** Notes a session's use unless one after `touchBefore` is noted already: concurrent requests, on any process, write once. */
export const touchSession = fixedStatement(
  (db, p: { sessionId: string; now: Date; touchBefore: Date }) =>
    db.updateTable('sessions').set({ last_used_at: p.now }).where('id', '=', p.sessionId).where('last_used_at', '<', p.touchBefore),
);

export type RefreshOutcome = 'invalid_refresh_token' | 'invalid_token' | 'session_ended' | 'session_expired' | 'issued' | 'replayed' | 'reused';

/**
 * The whole of a refresh in one statement (the function of migration 20261206T1000, which says what
 * each outcome did): `successorSealed` is stored only when this call rotates the session;
 * `successor_sealed` comes back when the token was already used up within the grace window.
 */
export const refreshTokenSet = fixedStatement(
  (
    _db,
    p: {
      refreshDigest: Buffer;
      accessDigest: Buffer;
      now: Date;
      idleCutoff: Date;
      graceS: number;
      newAccessDigest: Buffer;
      newRefreshDigest: Buffer;
      successorSealed: Buffer;
      ip: string;
      userAgent: string;
      requestId: string | null;
    },
  ) => sql<{ outcome: RefreshOutcome; session_id: string | null; user_id: string | null; successor_sealed: Buffer | null }>`
    select outcome, session_id, user_id, successor_sealed from refresh_token_set(
      ${p.refreshDigest}, ${p.accessDigest}, ${p.now}, ${p.idleCutoff}, ${p.graceS},
      ${p.newAccessDigest}, ${p.newRefreshDigest}, ${p.successorSealed}, ${p.ip}, ${p.userAgent}, ${p.requestId})`,
);

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

/** What opening a session writes. */
export interface NewSession {
  userId: string;
  ip: string;
  userAgent: string;
  now: Date;
  expiresAt: Date;
  accessDigest: Buffer;
  refreshDigest: Buffer;
  /** The signing-in e-mail's digest (the throttle's `emailDigest`): its failures from `ip` are cleared. */
  emailDigest: Buffer;
  /** `ip` as the throttle counts it: the attempt's countedAddress. */
  countedAddress: string;
  requestId: string | null;
  /** How the person proved who they are. */
  method: AuthenticationMethod;
  /**
   * The digest (passwordDigest) of the password hash a sign-in verified the password against: the
   * session opens only if the person's row still holds that hash. Null when no password was
   * checked for this session.
   */
  passwordDigest: Buffer | null;
  /**
   * The device signed in from (src/auth/sessions/devices.ts): remembered on the person, with a
   * notice when it is new to them. Null for a session opened without a person at a browser (the
   * benchmarks' seeding): nothing remembered, nothing sent.
   */
  device: DeviceSighting | null;
}

/** The statement's parameters: NewSession with the device's fields flat (a fixed statement's parameters are one level). */
type OpenSessionParameters = Omit<NewSession, 'device'> & {
  deviceDigest: Buffer | null;
  deviceKeyId: string | null;
  noticeEnSubject: string;
  noticeEnText: string;
  noticeEnHtml: string;
  noticeFrSubject: string;
  noticeFrText: string;
  noticeFrHtml: string;
};

/**
 * Opens a session with its first token set, notes the sign-in on the user, records the event (the
 * user acting, on the new session: src/audit) and forgets the throttle's failures of this e-mail
 * digest from this address (a success clears its pair: src/auth/throttle), in one statement (one round
 * trip, atomic), compiled once: sign-in throughput is what the benchmark measures.
 *
 * The user's row is locked and written first and everything else hangs on it: a change holding the
 * row (an erasure, a disabling, a password reset or change) is waited for, and the statement then
 * sees the row as that change left it. A user no longer active by then, or (for a password
 * sign-in, `passwordDigest` set) whose password hash is no longer the one the password was verified
 * against, gets no session, no event and no cleared failures (no row back): the password checked
 * before the hashing's wait is not the person's password any more, and a reset that ended every
 * session must not be followed by one opened with the old password. Taking the row before anything
 * else is also the lock order of those changes (the user, then the rest), so the two never deadlock.
 *
 * The same write of the row remembers the device (src/auth/sessions/devices.ts): its digest moves
 * to the front of `known_devices`, the list cut at KNOWN_DEVICES_KEPT. `b` reads the list as it is
 * before this statement's write, under the row lock, so of two sign-ins racing from one new device
 * the second sees the first's and only one notice is written; a new device (not in a list made
 * under the current key; an empty list or one of another key is only started) gets the notice in
 * `n`, in the same statement: a sign-in and its notice commit together or not at all.
 */
export const openSessionStatement = fixedStatement(
  (_db, p: OpenSessionParameters) => sql<{ id: string }>`
    with d as (
      select ${p.deviceDigest}::bytea as digest, ${p.deviceKeyId}::text as key_id
    ), b as (
      select id, known_devices, known_devices_key_id from users
      where id = ${p.userId} and status = 'active' and (${p.passwordDigest}::bytea is null or sha256(convert_to(password_hash, 'UTF8')) = ${p.passwordDigest})
      for update
    ), u as (
      update users set last_sign_in_at = ${p.now},
        known_devices = case
          when d.digest is null then b.known_devices
          when b.known_devices_key_id = d.key_id then (array[d.digest] || array_remove(b.known_devices, d.digest))[1:${sql.lit(KNOWN_DEVICES_KEPT)}]
          else array[d.digest] end,
        known_devices_key_id = coalesce(d.key_id, b.known_devices_key_id)
      from b, d where users.id = b.id
      returning users.id, users.email, users.language, users.first_name || ' ' || users.last_name as name,
        coalesce(b.known_devices_key_id = d.key_id and d.digest <> all (b.known_devices), false) as new_device
    ), s as (
      insert into sessions (user_id, ip_address, user_agent, created_at, last_used_at, expires_at, authentication_method)
      select u.id, ${p.ip}, ${p.userAgent}, ${p.now}, ${p.now}, ${p.expiresAt}, ${p.method} from u
      returning id, generation
    ), t as (
      insert into session_tokens (session_id, generation, access_digest, refresh_digest, issued_at)
      select id, generation, ${p.accessDigest}, ${p.refreshDigest}, ${p.now} from s
    ), e as (
      insert into security_events (type, occurred_at, user_id, session_id, ip_address, user_agent,
        actor_type, actor_id, actor_label, target_type, target_id, target_label, request_id)
      select 'sign_in_succeeded', ${p.now}, u.id, s.id, ${p.ip}, ${p.userAgent},
        'user', u.id, u.name, 'session', s.id, u.name, ${p.requestId}
      from s, u
    ), c as (
      delete from sign_in_failures where email_digest = ${p.emailDigest} and ip_address = ${p.countedAddress} and exists (select 1 from u)
    ), n as (${newDeviceNotice(
      { en: { subject: p.noticeEnSubject, text: p.noticeEnText, html: p.noticeEnHtml }, fr: { subject: p.noticeFrSubject, text: p.noticeFrText, html: p.noticeFrHtml } },
      p.now,
    )})
    select id from s`,
);

/** What a sign-in remembers of the password hash it verified: its SHA-256 digest, the same as PostgreSQL's `sha256(convert_to(password_hash, 'UTF8'))`. */
export const passwordDigest = (passwordHash: string): Buffer => createHash('sha256').update(passwordHash, 'utf8').digest();

type SessionToOpen = Omit<NewSession, 'requestId' | 'method' | 'device' | 'passwordDigest'> & {
  requestId?: string | null;
  method?: AuthenticationMethod;
  device?: DeviceSighting | null;
  passwordDigest?: Buffer | null;
};

/** Opens the session; undefined (nothing written) when the person is no longer active or their password hash's digest is no longer `passwordDigest`. */
export async function tryOpenSession(db: Kysely<Database>, v: SessionToOpen): Promise<string | undefined> {
  const { device = null, ...session } = v;
  const [row] = await openSessionStatement.execute(db, {
    ...session,
    requestId: v.requestId ?? null,
    method: v.method ?? 'password',
    passwordDigest: v.passwordDigest ?? null,
    deviceDigest: device?.digest ?? null,
    deviceKeyId: device?.keyId ?? null,
    noticeEnSubject: device?.notice.en.subject ?? '',
    noticeEnText: device?.notice.en.text ?? '',
    noticeEnHtml: device?.notice.en.html ?? '',
    noticeFrSubject: device?.notice.fr.subject ?? '',
    noticeFrText: device?.notice.fr.text ?? '',
    noticeFrHtml: device?.notice.fr.html ?? '',
  });
  return row?.id;
}

export async function openSession(db: Kysely<Database>, v: SessionToOpen): Promise<string> {
  const id = await tryOpenSession(db, v);
  // Disabled or erased since their credentials were checked: the same answer as a wrong password.
  if (id === undefined) throw unauthenticated('invalid_credentials', 'The e-mail address or the password is wrong.');
  return id;
}
