#!/usr/bin/env node
// The `backoffice` command line: operator tasks against the configured database
// (DATABASE_URL, or the embedded database under DATA_DIR). One module per command group.
import { Command } from 'commander';
import { registerMigrate } from './migrate.js';
import { registerRoles } from './roles.js';
import { registerApiKeys } from './api-keys.js';
import { registerSeed } from './seed.js';
import { registerUsers } from './users.js';
import { registerSweep } from './sweep.js';
import { registerAudit } from './audit.js';
import { registerCursorKey } from './cursor-key.js';
import { registerSealingKeys } from './sealing-keys.js';

const program = new Command('backoffice').description('Back-office API operator commands').showHelpAfterError();
registerMigrate(program);
registerUsers(program);
registerRoles(program);
registerApiKeys(program);
registerSeed(program);
registerSweep(program);
registerAudit(program);
registerCursorKey(program);
registerSealingKeys(program);

program.parseAsync().catch((err: unknown) => {
  console.error(`error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
