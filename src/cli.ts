#!/usr/bin/env node
// The `backoffice` command line: operator tasks against the configured database.
import { Command } from 'commander';
import { loadConfig } from './config.js';
import { createLogger } from './logger.js';
import { openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';

const program = new Command('backoffice').description('Back-office API operator commands');

program
  .command('migrate')
  .description('Apply pending database migrations')
  .action(async () => {
    const config = loadConfig();
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, ...config.db }, logger);
    try {
      const applied = await migrateToLatest(database.db);
      process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Already up to date.\n');
    } finally {
      await database.close();
    }
  });

program.parseAsync().catch((err: unknown) => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
