// What a test needs to talk to the real service: its own database (copied from the migrated
// template), the app built from the real parts, captured logs, and a checker of the contract.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { inject } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { createApp, type AppDependencies } from '../../src/http/app.js';
import { loadSpec } from '../../src/contract/spec.js';
import { createLogger } from '../../src/logger.js';
import { buildServices, createHandlers } from '../../src/composition.js';
import { withDatabase } from './postgres.js';
import { PreparingClient } from '../../src/db/prepared-statements.js';
import { runFixedStatementsOnPool } from '../../src/db/fixed-statement.js';
import { ManualClock, type Clock } from '../../src/clock.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Dependencies } from '../../src/dependencies.js';

const TEMPLATE_DATABASE = 'backoffice_template';

export interface TestDatabase {
  url: string;
  db: Kysely<Database>;
  pool: pg.Pool;
  destroy(): Promise<void>;
}

/**
 * A pool of a test's own. destroy() drops the database with (force), which ends the connections
 * still open on it server-side (57P01), idle ones and ones a pool is still closing (pg-pool's end()
 * settles before its clients' sockets close). The pool re-emits that as 'error', which without a
 * listener is an uncaught exception in whatever test file runs then (tasks-list.test.ts in one CI
 * run): expected, not an error of the test.
 */
export function testPool(config: pg.PoolConfig): pg.Pool {
  const pool = new pg.Pool(config);
  pool.on('error', () => {});
  return pool;
}

/** A fresh, migrated database of its own (`empty`: not even migrated); drop it with destroy(). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const adminUrl = inject('adminDatabaseUrl');
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(options.empty ? `create database ${name}` : `create database ${name} template ${TEMPLATE_DATABASE}`);
  await admin.end();
  const url = withDatabase(adminUrl, name);
  // Named prepared statements, as the service uses by default (DB_PREPARED_STATEMENTS).
  const pool = testPool({ connectionString: url, max: 20, Client: PreparingClient });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  runFixedStatementsOnPool(db, pool); // as the service's src/db/database.ts does
  return {
    url,
    db,
    pool,
    async destroy() {
      await db.destroy();
      const drop = new pg.Client({ connectionString: adminUrl });
      await drop.connect();
      await drop.query(`drop database if exists ${name} with (force)`);
      await drop.end();
    },
  };
}

/** A logger whose JSON lines the test can read back. */
export function captureLogs() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return {
    logger: createLogger('debug', stream),
    text: () => lines.join('\n'),
    records: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

export const spec = loadSpec();

/**
 * What tests run with unless they say otherwise. ADMIN_SECOND_FACTOR: the many tests that sign in
 * as an administrator are about something else than the second-factor policy, so the harness
 * lets administrators in without one; the policy's own tests (test/second-factor-policy.test.ts)
 * remove the variable and run with the service's default, `required`.
 * OIDC_ALLOW_INSECURE_ISSUERS: the tests' OpenID Providers listen on loopback over plain http
 * (test/support/oidc-provider.ts, test/support/oidc.ts), which the service refuses by default; the
 * refusal's own tests (test/oidc-sign-in.test.ts, "security: ...") remove the variable.
 */
export const TEST_ENV: Record<string, string> = { NODE_ENV: 'test', LOG_LEVEL: 'debug', ADMIN_SECOND_FACTOR: 'optional', OIDC_ALLOW_INSECURE_ISSUERS: 'true', SEALING_KEYS: process.env.SEALING_KEYS! };

/** The configuration of a test: the defaults, plus the environment variables given (undefined removes one, leaving the service's default). */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({ ...TEST_ENV, ...env });
}

type Overrides = Partial<Omit<AppDependencies, 'options' | 'db'>> & {
  options?: Partial<AppDependencies['options']>;
  clock?: Clock;
  /** Environment variables for the configuration (see src/config.ts); undefined removes one of TEST_ENV. */
  env?: Record<string, string | undefined>;
  /** Where domain outcomes are counted (src/outcomes.ts). */
  outcomes?: Dependencies['outcomes'];
};

/** The real app on a test database, with a manual clock; any dependency can be replaced. */
export function createTestApp(db: Kysely<Database>, overrides: Overrides = {}) {
  const logs = captureLogs();
  const clock = overrides.clock ?? new ManualClock(new Date());
  const config = testConfig(overrides.env);
  const logger = overrides.logger ?? logs.logger;
  const deps: Dependencies = { db, clock, logger, config, outcomes: overrides.outcomes };
  const services = buildServices(deps);
  const app = createApp({
    spec,
    db,
    logger,
    handlers: overrides.handlers ?? createHandlers(services),
    authenticators: overrides.authenticators ?? services.authenticators,
    admission: services.admission,
    options: { validateResponses: true, trustProxy: config.trustProxy, bodyLimitBytes: config.bodyLimitBytes, ...overrides.options },
    observeRequest: overrides.observeRequest,
    tracer: overrides.tracer,
    devMailbox: services.mail.devMailbox,
  });
  return { app, logs, clock, deps, services };
}
