// The database of an HTTP benchmark: a throwaway PostgreSQL 15 (or the server at DATABASE_URL), a
// fresh database in it, migrated; and what the benchmarks seed into it.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { startCluster, withDatabase } from '../../test/support/postgres.js';
import { createUserWithPassword } from '../../src/users/credentials.js';
import { newTokenSet, digestToken, ACCESS_TOKEN_TTL_S, type TokenSet } from '../../src/auth/sessions/tokens.js';
import { bearerSession, openSession } from '../../src/auth/sessions/repository.js';
import { livenessAt } from '../../src/auth/sessions/liveness.js';
import { emailDigest } from '../../src/auth/throttle/sign-in-throttle.js';
import { ApiKeyService, type KeyInput } from '../../src/api-keys/service.js';
import { OPERATOR } from '../../src/auth/authority.js';
import { systemClock } from '../../src/clock.js';
import { sealAuditEvents } from '../../src/audit/seal.js';
import { parentPid } from './cpu.js';
import { print } from './measure.js';

export interface BenchDatabase {
  url: string;
  db: Kysely<Database>;
  /** A whole seeding of an earlier run is kept (BENCH_KEEP_DATABASES): seed nothing. */
  seeded: boolean;
  /** The postmaster: its children are PostgreSQL's processes (undefined with a remote DATABASE_URL). */
  postmaster: number | undefined;
  stop(): Promise<void>;
}

/**
 * `migrate: false` leaves the migrations to the service (a build of other code may have others); `poolMax`: connections of `db` (4).
 * With `BENCH_KEEP_DATABASES=1` and a DATABASE_URL, a database a run of the same benchmark seeded
 * whole before (`markSeeded`) is kept and `seeded` is true: a million rows are seeded once, in a
 * busy hour, and measured later, alone (docs/BENCHMARKS.md, "Measure alone").
 */
export async function benchDatabase(name: string, options: { migrate?: boolean; poolMax?: number } = {}): Promise<BenchDatabase> {
  const cluster = process.env.DATABASE_URL ? undefined : await startCluster();
  const adminUrl = process.env.DATABASE_URL ?? cluster!.adminUrl;
  const url = withDatabase(adminUrl, name);
  const seeded = cluster === undefined && process.env.BENCH_KEEP_DATABASES === '1' && (await wasSeeded(url));
  if (!seeded) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`drop database if exists ${name}`);
    await admin.query(`create database ${name}`);
    await admin.end();
  }
  const pool = new pg.Pool({ connectionString: url, max: options.poolMax ?? 4 });
  pool.on('error', () => {}); // idle connections dropped when the cluster stops
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (options.migrate !== false) await migrateToLatest(db);
  const backend = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db)).rows[0]!.pid;
  // PostgreSQL's processes are counted when they run on this machine (ours, or a local DATABASE_URL's).
  const local = existsSync(`/proc/${backend}`);
  return {
    url,
    db,
    seeded,
    postmaster: local ? parentPid(backend) : undefined,
    async stop() {
      await db.destroy();
      cluster?.stop();
    },
  };
}

/** Whether the database at `url` holds a whole seeding (markSeeded ran in it). */
async function wasSeeded(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    return (await client.query(`select 1 from bench_seeded`)).rowCount === 1;
  } catch {
    return false; // no such database, or a seeding that did not finish
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Leaves the database as a service in use holds it, before the first measurement, by doing now the
 * catch-ups a seeding would otherwise set off in the middle of the run (docs/BENCHMARKS.md,
 * "Settled before measuring"):
 *  - the audit events the seeding recorded (a users seeding, one per user) are sealed. The service's first
 *    maintenance step, SWEEP_INTERVAL_S (300 s) after it starts, would seal them all at once, 10,000
 *    at a time: seconds of the service's and PostgreSQL's CPU in whichever measurement ran then,
 *    where later steps seal a few events each. A service's own step may hold the sealers' lock
 *    meanwhile: wait for it.
 *  - the whole database is vacuumed, frozen and analyzed: the seal leaves a dead version of every
 *    event behind, and the first read of a freshly written row sets its hint bits, which dirties
 *    its page again after any checkpoint (and an asynchronous commit's rows cannot be hinted until
 *    its WAL is flushed, so a plain VACUUM leaves them to the first reader). Frozen rows need no
 *    hint bits.
 *  - every dirty buffer is written out (CHECKPOINT). Otherwise a timed checkpoint writes them
 *    spread over up to 4.5 minutes of the run; the checkpointer is one of the postmaster's
 *    children, so its CPU is counted in whichever measurement runs then. A role that may not
 *    checkpoint (not a superuser, not in pg_checkpoint) is told so and the run goes on.
 */
export async function settleBeforeMeasuring({ db }: Pick<BenchDatabase, 'db'>): Promise<void> {
  const until = Date.now() + SETTLE_SEAL_TIMEOUT_MS;
  let sealed = 0;
  while (await db.selectFrom('security_events').select('id').where('seal_id', 'is', null).limit(1).executeTakeFirst()) {
    if (Date.now() > until) throw new Error(`audit events still unsealed after ${SETTLE_SEAL_TIMEOUT_MS / 1000} s`);
    const { events } = await sealAuditEvents(db, new Date());
    sealed += events;
    if (events === 0) await new Promise((resolve) => setTimeout(resolve, 100)); // another sealer holds the lock
  }
  if (sealed > 0) print(`sealed the ${sealed} audit events waiting (the seeding's)`);
  await sql`vacuum (freeze, analyze)`.execute(db);
  try {
    await sql`checkpoint`.execute(db);
  } catch (err) {
    if ((err as { code?: string }).code !== INSUFFICIENT_PRIVILEGE) throw err;
    print(`could not checkpoint before measuring (${(err as Error).message}): a timed checkpoint may land in a measurement`);
  }
}

const SETTLE_SEAL_TIMEOUT_MS = 10 * 60 * 1000; // a sealer that never lets go stops the run instead of hanging it
const INSUFFICIENT_PRIVILEGE = '42501';

/** Notes that the seeding finished (BENCH_KEEP_DATABASES). */
export async function markSeeded(db: Kysely<Database>): Promise<void> {
  await sql`create table if not exists bench_seeded (at timestamptz not null default now())`.execute(db);
  await sql`insert into bench_seeded default values`.execute(db);
}

/**
 * Every seeded user gets a role of two permissions and a live session with its tokens, and 10,000
 * API keys are added: the tables of a database in use, where every read of a hot statement is an
 * index probe (with only the benchmark's few rows, roles, sessions and keys are one page each,
 * read by sequential scans, which hid what the admin check cost: bench/bearer-parts.ts).
 */
export async function seedProductionShape(db: Kysely<Database>): Promise<void> {
  const role = await db.insertInto('roles').values({ name: 'seeded reader', name_key: 'seeded reader' }).returning('id').executeTakeFirstOrThrow();
  await db.insertInto('role_permissions').values(['users.list', 'users.read'].map((permission) => ({ role_id: role.id, permission }))).execute();
  await sql`insert into user_roles (user_id, role_id) select id, ${role.id} from users`.execute(db);
  await sql`insert into sessions (user_id, ip_address, user_agent, created_at, last_used_at, expires_at)
    select id, '10.0.0.1', '', now(), now(), now() + interval '30 days' from users`.execute(db);
  await sql`insert into session_tokens (session_id, generation, access_digest, refresh_digest, issued_at)
    select id, 1, sha256(('a' || id::text)::bytea), sha256(('r' || id::text)::bytea), now() from sessions`.execute(db);
  await sql`insert into api_keys (name, name_key, permissions, display_prefix, last_characters, created_at, updated_at)
    select 'key ' || g, 'key ' || g, '{users.list}', 'bo_', 'abcd', now(), now() from generate_series(1, 10000) g`.execute(db);
  await sql`insert into api_key_secrets (digest, api_key_id, created_at) select sha256(id::text::bytea), id, now() from api_keys`.execute(db);
}

/** The bearer statement's parameters for an access token at `now`, as the authenticator makes them (default idle timeout, touch once a minute). */
export function bearerStatementValues(accessToken: string, now: Date): unknown[] {
  return bearerSession.parameters({
    accessDigest: digestToken(accessToken),
    issuedAfter: new Date(now.getTime() - ACCESS_TOKEN_TTL_S * 1000),
    ...livenessAt(now, 7 * 24 * 3600),
    touchBefore: new Date(now.getTime() - 60_000),
    adminsNeedSecondFactor: true, // ADMIN_SECOND_FACTOR's default
  });
}

/**
 * An administrator (every permission, through the built-in admin role) with a second factor, as
 * the default ADMIN_SECOND_FACTOR=required wants of one: a confirmed passkey row (never used; the
 * benchmarks open sessions without signing in), so the bearer path is the one a real administrator's
 * requests take, not `403 second_factor_required`.
 */
export async function createAdmin(db: Kysely<Database>, email = 'bench-admin@example.com') {
  const { id } = await createUserWithPassword(db, { email, firstName: 'Bench', lastName: 'Admin', password: 'benchmark passphrase 1234', roles: ['admin'] });
  const now = new Date();
  await db
    .insertInto('second_factors')
    .values({ user_id: id, kind: 'passkey', name: 'Bench', created_at: now, confirmed_at: now, credential_id: randomUUID(), public_key: Buffer.alloc(77), sign_count: 0, backup_eligible: false, backup_state: false })
    .execute();
  return { id, email };
}

/** An API key made by the operator, as the command line makes one: drafted, then created in a transaction of its own. */
export async function operatorKey(db: Kysely<Database>, sent: KeyInput) {
  const keys = new ApiKeyService({ db, clock: systemClock });
  const draft = keys.draft(OPERATOR, sent);
  return db.transaction().execute((trx) => keys.create(trx, OPERATOR, draft));
}

/**
 * What a comparison sends: a new API key holding `permission`, and the headers of a fresh session
 * of a new administrator at each call (access tokens live 600 s; a kept database has the last
 * run's administrators, so each run makes its own).
 */
export async function benchCredentials(db: Kysely<Database>, permission: string) {
  const { secret } = await operatorKey(db, { name: `bench ${new Date().toISOString()}`, permissions: [permission] });
  const admin = await createAdmin(db, `bench-admin-${Date.now()}@example.com`);
  return { secret, bearer: async () => ({ authorization: `Bearer ${(await openSessions(db, admin, 1))[0]!.access_token}` }) };
}

/** `count` new sessions of the user, opened as a sign-in opens them (without the password hashing). */
export async function openSessions(db: Kysely<Database>, user: { id: string; email: string }, count: number): Promise<TokenSet[]> {
  const sets: TokenSet[] = [];
  for (let i = 0; i < count; i++) {
    const set = newTokenSet();
    const now = new Date();
    await openSession(db, {
      userId: user.id,
      ip: '127.0.0.1',
      countedAddress: '127.0.0.1',
      userAgent: '',
      now,
      expiresAt: new Date(now.getTime() + 30 * 24 * 3600 * 1000),
      accessDigest: digestToken(set.access_token),
      refreshDigest: digestToken(set.refresh_token),
      emailDigest: emailDigest(user.email),
    });
    sets.push(set);
  }
  return sets;
}
