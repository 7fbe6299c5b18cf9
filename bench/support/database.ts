// The database of an HTTP benchmark: a throwaway PostgreSQL 15 (or the server at DATABASE_URL), a
// fresh database in it, migrated; and what the benchmarks seed into it.
import pg from 'pg';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { startCluster, withDatabase } from '../../test/support/postgres.js';
import { createUserWithPassword } from '../../src/users/credentials.js';
import { newTokenSet, digestToken, type TokenSet } from '../../src/sessions/tokens.js';
import { openSession } from '../../src/sessions/repository.js';
import { emailDigest } from '../../src/throttle/sign-in-throttle.js';
import { parentPid } from './cpu.js';

export interface BenchDatabase {
  url: string;
  db: Kysely<Database>;
  /** The postmaster: its children are PostgreSQL's processes (undefined with a remote DATABASE_URL). */
  postmaster: number | undefined;
  stop(): Promise<void>;
}

/** `migrate: false` leaves the migrations to the service (a build of other code may have others); `poolMax`: connections of `db` (4). */
export async function benchDatabase(name: string, options: { migrate?: boolean; poolMax?: number } = {}): Promise<BenchDatabase> {
  const cluster = process.env.DATABASE_URL ? undefined : await startCluster();
  const adminUrl = process.env.DATABASE_URL ?? cluster!.adminUrl;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  const pool = new pg.Pool({ connectionString: url, max: options.poolMax ?? 4 });
  pool.on('error', () => {}); // idle connections dropped when the cluster stops
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (options.migrate !== false) await migrateToLatest(db);
  const backend = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  return {
    url,
    db,
    postmaster: cluster ? parentPid(backend.rows[0]!.pid) : undefined,
    async stop() {
      await db.destroy();
      cluster?.stop();
    },
  };
}

/** An administrator (every permission, through the built-in admin role). */
export async function createAdmin(db: Kysely<Database>, email = 'bench-admin@example.com') {
  const { id } = await createUserWithPassword(db, { email, firstName: 'Bench', lastName: 'Admin', password: 'benchmark passphrase 1234', roles: ['admin'] });
  return { id, email };
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
