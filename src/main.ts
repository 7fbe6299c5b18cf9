// The entry point. Run by `npm start` (node with package.json's flags, docs/DEPLOYMENT.md): read
// config, migrate, listen; on SIGTERM fail readiness, stop accepting, let in-flight requests finish
// and keep-alive connections close without a reset (up to SHUTDOWN_GRACE_MS: HttpServer.shutDown),
// close the pool and exit 0.
// Imported (tests): `buildService` wires the service from configuration without listening.
// First: with tracing configured, pg must be instrumented before anything loads it.
import { tracerProvider } from './tracing/setup.js';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import type { Logger } from 'pino';
import { loadConfig, ConfigError, type Config } from './config.js';
import { bufferedStdout, createLogger } from './logger.js';
import { createHttpServer } from './http/server.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { loadSpec } from './contract/spec.js';
import { assertContractLoads } from './contract/validator.js';
import { buildServices, createHandlers } from './composition.js';
import { createApp } from './http/app.js';
import { fileClock, systemClock } from './clock.js';
import { startReconciliation } from './limits/admission/reconciliation.js';
import { createFirstAdministrator } from './users/bootstrap.js';
import { startSweeper } from './maintenance/sweeper.js';
import { drainSwitch, type Drain } from './http/drain.js';
import { serviceMetrics, type ServiceMetrics } from './metrics/registry.js';
import { startMetricsServer } from './metrics/server.js';
import { SERVICE_NAME } from './tracing/start.js';
import { isWorker, offerMetricsToPrimary, runPrimary } from './cluster.js';
import { shareHashingAmong } from './auth/secrets/passwords.js';
import { keyringOf, withSealingKeys } from './auth/secrets/sealing-keys.js';
import { resealAll } from './maintenance/reseal.js';
import { PRELOAD_SINCE_MS, type KeyCache } from './api-keys/key-cache.js';
import type { Clock } from './clock.js';

/** How long a starting process waits for its key cache to be in step before it answers anyway. */
const KEY_CACHE_START_WAIT_MS = 10_000;

async function warmKeyCache(cache: KeyCache, clock: Clock, logger: Logger): Promise<void> {
  try {
    if (!(await cache.settled(KEY_CACHE_START_WAIT_MS))) return; // said by the cache: it could not listen
    const now = clock.now();
    const loaded = await cache.preload(new Date(now.getTime() - PRELOAD_SINCE_MS), now);
    logger.info({ loaded }, 'API key cache: recently used keys loaded');
  } catch (err) {
    logger.warn({ err: { message: (err as Error).message } }, 'API key cache: recently used keys not loaded at start; they load on demand');
  }
}

export interface Service {
  app: ReturnType<typeof createApp>;
  database: DatabaseHandle;
  /** On at shutdown: readiness fails and answers close their connection (shared with the HTTP server). */
  drain: Drain;
  /** The metrics, when the configuration serves them (METRICS_PORT). */
  metrics: ServiceMetrics | undefined;
  /** API keys in memory (tests: what a process holds before it answers). */
  keyCache: KeyCache;
  /** Stops background work (the sweep); then the database may close. */
  stopBackgroundWork(): Promise<void>;
}

export async function buildService(configured: Config, logger: Logger): Promise<Service> {
  // The sealing keys: configured, or the embedded database's own in DATA_DIR (made at first start).
  const config = withSealingKeys(configured);
  const spec = loadSpec();
  await assertContractLoads(spec);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db }, logger);
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    if (database.kind === 'embedded') {
      const created = await createFirstAdministrator(database.db, config.bootstrapAdminEmail, config.dataDir);
      // The path only: the password is in a file its owner alone can read, never in the log.
      if (created) logger.warn(created, `first administrator ${created.email} created; its password is in ${created.passwordFile} (readable by this user only)`);
    }
    const resealed = await resealAll(database.db, keyringOf(config));
    if (resealed.totpResealed + resealed.webhookSecretsResealed + resealed.recoveryCodesKeyed + resealed.fingerprintsKeyed > 0 || resealed.databaseSecretDeleted || resealed.webhookDatabaseSecretDeleted)
      logger.info({ resealed }, 'values moved to the current sealing key');
    if (resealed.totpUnopenable > 0) logger.warn({ resealed }, 'some authenticator-app keys are sealed under a key that is not configured: put it back in SEALING_KEYS');
    if (resealed.webhookSecretsUnopenable > 0) logger.warn({ resealed }, 'some webhook signing secrets are sealed under a key that is not configured: put it back in SEALING_KEYS (or rotate those secrets)');
    const clock = config.testClockFile ? fileClock(config.testClockFile) : systemClock;
    const metrics = config.metrics ? serviceMetrics({ db: database.db, pool: database.pool, clock }) : undefined;
    const deps = { db: database.db, clock, logger, config, outcomes: metrics?.outcomes };
    const services = buildServices(deps);
    const drain = drainSwitch();
    const app = createApp({
      spec,
      db: database.db,
      logger,
      handlers: createHandlers(services),
      authenticators: services.authenticators,
      admission: services.admission,
      options: { validateResponses: config.validateResponses, trustProxy: config.trustProxy, bodyLimitBytes: config.bodyLimitBytes },
      drain,
      observeRequest: metrics?.observeRequest,
      tracer: tracerProvider?.getTracer(SERVICE_NAME),
      devMailbox: services.mail.devMailbox,
    });
    const sweeper = config.sweep.intervalS > 0 ? startSweeper(deps, config.sweep, config.sweep.intervalS) : undefined;
    const reconciliation = startReconciliation(services.admission, config.rateLimits.syncIntervalMs, logger);
    // Webhook deliveries from every process that delivers (WEBHOOKS_DELIVER): LISTEN on PostgreSQL;
    // polling alone on the embedded database (one connection).
    if (config.webhooks.deliver) services.deliveries.start(database.kind === 'postgres' ? config.databaseUrl : undefined);
    // API keys from memory, in step through a LISTEN connection of its own: PostgreSQL only. The
    // embedded database serves one connection (the pool's), so there every key is verified by it.
    if (database.kind === 'postgres') {
      services.keyCache.start(config.databaseUrl!);
      // Before the server listens: in step, and the keys used in the last day in memory, so that a
      // process just started (a deploy, a restart) answers its partners' first requests as the
      // others do. Bounded: past the wait it answers all the same, verifying keys by the database
      // until it hears notifications.
      await warmKeyCache(services.keyCache, clock, logger);
    }
    // The outbox of mail, sent in the background (MAIL_SEND): a change never waits for it.
    if (config.mail.send) services.mail.sender?.start(database.kind === 'postgres' ? config.databaseUrl : undefined);
    if (config.mail.devMailbox) logger.warn('mail goes to the development mailbox (no SMTP_URL): administrators read it in the back office; nothing is sent');
    return {
      app,
      database,
      drain,
      metrics,
      keyCache: services.keyCache,
      stopBackgroundWork: async () => {
        await Promise.all([sweeper?.stop(), reconciliation.stop(), services.deliveries.stop(), services.keyUses.stop().then(() => services.keyCache.stop()), services.mail.sender?.stop()]);
      },
    };
  } catch (err) {
    await database.close();
    throw err;
  }
}

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel, bufferedStdout(), config.workers > 1 ? { pid: process.pid } : {});
  // WORKERS > 1: this process starts and watches the workers, which run the rest of main().
  if (config.workers > 1 && !isWorker()) return runPrimary(config, logger);
  if (isWorker()) shareHashingAmong(config.workers);
  const { app, database, drain, metrics, stopBackgroundWork } = await buildService(config, logger);
  if (metrics && isWorker()) offerMetricsToPrimary(metrics.registry);
  const metricsServer = metrics && config.metrics && !isWorker() ? await startMetricsServer(metrics.registry, config.metrics.host, config.metrics.port, logger) : undefined;
  const server = createHttpServer(app, drain);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const { address, port, family } = server.address() as AddressInfo;
  // The address actually bound: what HOST resolved to, IPv6 in brackets as in a URL.
  const url = `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
  const everywhere = address === '0.0.0.0' || address === '::';
  logger.info({ address, port, database: database.kind }, `listening on ${url}${everywhere ? ' (every interface)' : ''}`);
  if (metricsServer) logger.info({ metrics: config.metrics }, `metrics on http://${config.metrics!.host}:${config.metrics!.port}/metrics`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: readiness fails, no new connections, finishing in-flight requests');
    await server.shutDown(config.shutdownGraceMs);
    metricsServer?.close();
    // The spans still batched are sent; a collector that does not answer does not stop the exit.
    await tracerProvider?.shutdown().catch((err: unknown) => logger.warn({ err: { message: (err as Error).message } }, 'traces not sent'));
    await stopBackgroundWork();
    await database.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// Started as a program, not imported.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err) => {
    console.error('backoffice-api failed to start:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
