// `backoffice sweep`: delete expired sign-in attempts and old sessions now (what every server
// process does every SWEEP_INTERVAL_S; for operators who run it from a scheduler instead).
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { sweep } from '../maintenance/sweeper.js';
import { withDatabase } from './database.js';

export function registerSweep(program: Command): void {
  program
    .command('sweep')
    .description('Delete expired sign-in attempts and sessions over for longer than SESSION_RETENTION_DAYS')
    .action(() =>
      withDatabase(async ({ db }) => {
        const deleted = await sweep(db, new Date(), loadConfig().sweep.policy);
        process.stdout.write(`Deleted ${deleted.signInAttempts} expired sign-in attempts and ${deleted.sessions} old sessions.\n`);
      }),
    );
}
