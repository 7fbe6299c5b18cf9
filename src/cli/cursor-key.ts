// `backoffice rotate-cursor-key`: replaces the secret that signs pagination cursors (after a leak,
// or on a schedule). Outstanding cursors stop working (400 invalid_cursor: the client starts the
// list again); sessions, tokens and API keys are not affected. Servers pick it up within a minute.
import type { Command } from 'commander';
import { rotateServiceSecret } from '../auth/secrets/service-secrets.js';
import { withDatabase } from './database.js';

export function registerCursorKey(program: Command): void {
  program
    .command('rotate-cursor-key')
    .description('Replace the key that signs pagination cursors; outstanding cursors stop working, nothing else changes')
    .action(() =>
      withDatabase(async ({ db }) => {
        await rotateServiceSecret(db, 'cursor_signing', new Date());
        process.stdout.write('Rotated the cursor signing key: cursors issued before now are refused (within a minute on running servers).\n');
      }),
    );
}
