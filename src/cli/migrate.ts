// `backoffice migrate`: apply pending migrations.
import type { Command } from 'commander';
import { migrateToLatest } from '../db/migrate.js';
import { withDatabase } from './database.js';

export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('Apply pending database migrations')
    .action(() =>
      withDatabase(async ({ db }) => {
        const applied = await migrateToLatest(db);
        process.stdout.write(applied.length ? `Applied: ${applied.join(', ')}\n` : 'Already up to date.\n');
      }, { migrate: false }),
    );
}
