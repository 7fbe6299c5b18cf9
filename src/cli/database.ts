// Opens the configured database for one command and closes it afterwards. Like the service, it
// first applies pending migrations, so every command works on a new empty database.
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';

export async function withDatabase<T>(work: (database: DatabaseHandle) => Promise<T>, options: { migrate?: boolean } = {}): Promise<T> {
  const config = loadConfig();
  // Commands print their own results; only warnings and errors go to the log.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db }, logger);
  try {
    if (options.migrate ?? true) {
      const applied = await migrateToLatest(database.db);
      if (applied.length > 0) process.stderr.write(`Applied database migrations first: ${applied.join(', ')}\n`);
    }
    return await work(database);
  } finally {
    await database.close();
  }
}
