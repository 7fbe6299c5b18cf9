// Wires the service together from configuration: database, migrations, handlers, app.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { openDatabase, type DatabaseHandle } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { loadSpec } from './contract/spec.js';
import { assertContractLoads } from './contract/validator.js';
import { createHandlers } from './handlers/index.js';
import { buildServices } from './services.js';
import { createApp } from './http/app.js';
import { systemClock } from './clock.js';
import { createFirstAdministrator } from './sessions/bootstrap.js';
import { startSweeper } from './maintenance/sweeper.js';

export interface Service {
  app: ReturnType<typeof createApp>;
  database: DatabaseHandle;
  /** Stops background work (the sweep); then the database may close. */
  stopBackgroundWork(): Promise<void>;
}

export async function buildService(config: Config, logger: Logger): Promise<Service> {
  const spec = loadSpec();
  await assertContractLoads(spec);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db }, logger);
  try {
    const applied = await migrateToLatest(database.db);
    if (applied.length > 0) logger.info({ applied }, 'migrations applied');
    // Straight to the terminal, not the log: the password must not be kept in log storage.
    if (database.kind === 'embedded') await createFirstAdministrator(database.db, config.bootstrapAdminEmail, (text) => process.stdout.write(`${text}\n`));
    const deps = { db: database.db, clock: systemClock, logger, config };
    const services = buildServices(deps);
    const app = createApp({
      spec,
      db: database.db,
      logger,
      handlers: createHandlers(services),
      authenticators: services.authenticators,
      options: { validateResponses: config.validateResponses, trustProxy: config.trustProxy, bodyLimitBytes: config.bodyLimitBytes },
    });
    const sweeper = config.sweep.intervalS > 0 ? startSweeper(deps, config.sweep, config.sweep.intervalS) : undefined;
    return { app, database, stopBackgroundWork: async () => sweeper?.stop() };
  } catch (err) {
    await database.close();
    throw err;
  }
}
