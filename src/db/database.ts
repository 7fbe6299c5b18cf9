// Opens the database: a real PostgreSQL when DATABASE_URL is set, else the embedded PGlite.
// Either way the service sees the same thing: a `pg` pool under Kysely's PostgresDialect.
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Logger } from 'pino';
import type { Database } from './schema.js';
import { startEmbeddedPostgres } from './embedded.js';
import { PreparingClient } from './prepared-statements.js';
import { runFixedStatementsOnPool } from './fixed-statement.js';
import { UntimedWhenIdlePool } from './pool.js';

// int8 (bigint, count(*)) as a JS number: our counts stay far below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));

export interface DatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  poolMax: number;
  acquireTimeoutMs: number;
  statementTimeoutMs: number;
  /** Named prepared statements (src/db/prepared-statements.ts); off behind a pooler in transaction mode. */
  preparedStatements: boolean;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  pool: pg.Pool;
  /** `embedded` means PGlite in this process. */
  kind: 'postgres' | 'embedded';
  close(): Promise<void>;
}

export async function openDatabase(options: DatabaseOptions, log: Logger): Promise<DatabaseHandle> {
  let connectionString = options.databaseUrl;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!connectionString) {
    const embedded = await startEmbeddedPostgres(options.dataDir);
    connectionString = embedded.connectionString;
    stopEmbedded = embedded.stop;
    log.info({ dataDir: options.dataDir }, 'using the embedded PGlite database (set DATABASE_URL for PostgreSQL)');
  }
  const pool = new UntimedWhenIdlePool({
    connectionString,
    // PGlite serves one connection at a time: a pool of one keeps transactions from interleaving.
    max: stopEmbedded ? 1 : options.poolMax,
    // node-postgres waits forever for a free connection by default; we answer 503 instead.
    connectionTimeoutMillis: options.acquireTimeoutMs,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs,
    application_name: 'backoffice-api',
    // PGlite keeps one backend for every connection the socket serves in turn: a statement
    // prepared by an earlier connection would still exist there, unknown to the next one.
    ...(options.preparedStatements && !stopEmbedded ? { Client: PreparingClient } : {}),
  });
  // An idle client losing its connection must not crash the process; the pool replaces it.
  pool.on('error', (err) => log.warn({ err: { message: err.message } }, 'idle database connection lost'));
  // The pool listens for errors only on idle clients. A checked-out client whose server goes away
  // (PostgreSQL restarted, connection killed) emits 'error' with no listener, which would crash the
  // process; its query fails on its own and the pool drops the broken client when it comes back.
  pool.on('connect', (client) => {
    client.on('error', (err) => log.warn({ err: { message: err.message } }, 'database connection lost while in use'));
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  runFixedStatementsOnPool(db, pool);
  return {
    db,
    pool,
    kind: stopEmbedded ? 'embedded' : 'postgres',
    async close() {
      await db.destroy();
      await stopEmbedded?.();
    },
  };
}
