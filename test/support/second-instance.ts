// A second server instance on the same database with its own connection pool, as a second
// process behind a load balancer would be: nothing is shared with the first but PostgreSQL.
import { Kysely, PostgresDialect } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { createTestApp, testPool } from './context.js';
import type { Clock } from '../../src/clock.js';
import { PreparingClient } from '../../src/db/prepared-statements.js';
import { runFixedStatementsOnPool } from '../../src/db/fixed-statement.js';

export async function secondInstance(url: string, options: { clock?: Clock; env?: Record<string, string> } = {}) {
  const pool = testPool({ connectionString: url, max: 5, Client: PreparingClient });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  runFixedStatementsOnPool(db, pool);
  const { app, logs, services } = createTestApp(db, options);
  return { app, logs, db, services, close: () => db.destroy() };
}
