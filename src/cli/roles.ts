// `backoffice roles list`: every role and its permissions.
import type { Command } from 'commander';
import { listRoles } from '../roles/repository.js';
import { permissionsOfRole } from '../roles/permissions.js';
import { withDatabase } from './database.js';

export function registerRoles(program: Command): void {
  const roles = program.command('roles').description('Roles and their permissions');
  roles
    .command('list')
    .description('List every role with its permissions')
    .option('--json', 'print JSON instead of a table')
    .action((options: { json?: boolean }) =>
      withDatabase(async ({ db }) => {
        const rows = (await listRoles(db)).map((r) => ({ name: r.name, built_in: r.built_in, permissions: permissionsOfRole(r) }));
        if (options.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
        else for (const r of rows) process.stdout.write(`${r.name}${r.built_in ? ' (built-in)' : ''}: ${r.permissions.join(', ') || '-'}\n`);
      }),
    );
}
