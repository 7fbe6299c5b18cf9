// `backoffice users create`: a user with a password, read from standard input so that it never
// appears in the shell history or the process list.
import type { Command } from 'commander';
import { passwordPolicyViolation } from '../auth/passwords.js';
import { createUserWithPassword } from '../users/credentials.js';
import { withDatabase } from './database.js';

async function readStandardInput(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: the password, without its line ending.
  return Buffer.concat(chunks).toString('utf8').split(/\r?\n/)[0] ?? '';
}

export function registerUsers(program: Command): void {
  const users = program.command('users').description('Manage users');
  users
    .command('create')
    .description('Create an active user; the password is read from standard input (first line)')
    .requiredOption('--email <email>', 'e-mail address, used to sign in')
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .option('--role <role...>', 'role names to grant, e.g. admin')
    .action(async (options: { email: string; firstName: string; lastName: string; role?: string[] }) => {
      if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(options.email)) throw new Error(`Not an e-mail address: ${options.email}`);
      if (process.stdin.isTTY) process.stderr.write('Password (one line, then Ctrl-D): ');
      const password = await readStandardInput();
      const violation = passwordPolicyViolation(password);
      if (violation) throw new Error(violation);
      await withDatabase(async ({ db }) => {
        const { id } = await createUserWithPassword(db, {
          email: options.email,
          firstName: options.firstName,
          lastName: options.lastName,
          password,
          roles: options.role ?? [],
        });
        process.stdout.write(`Created user ${id} <${options.email}>${options.role?.length ? ` with roles ${options.role.join(', ')}` : ''}.\n`);
      });
    });
}
