// Opens the configured database for one command and closes it afterwards.
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';

export async function withDatabase<T>(work: (database: DatabaseHandle) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Commands print their own results; only warnings and errors go to the log.
  const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db }, logger);
  try {
    return await work(database);
  } finally {
    await database.close();
  }
}
