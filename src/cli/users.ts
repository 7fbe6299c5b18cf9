// `backoffice users create|disable|set-roles|reset-second-factor|erase`: a user with a password, read from standard input
// so that it never appears in the shell history or the process list (taken as the user's own, an
// operator creating their own account, unless --must-change-password says it was chosen for
// them); disabling a user and replacing their roles go through the same service as the API, as the
// operator (who holds every permission), so the last active administrator stays here too (409
// last_admin). Erasing a person (docs/ERASURE.md) is the API's erasure, by the operator, and asks
// for --yes: it cannot be undone.
import type { Command } from 'commander';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { passwordPolicyViolation } from '../auth/secrets/passwords.js';
import { OPERATOR } from '../auth/authority.js';
import { systemClock } from '../clock.js';
import { DomainError } from '../errors.js';
import { UserService } from '../users/service.js';
import { revokeSessions } from '../auth/sessions/revocation.js';
import { createUserWithPassword, findUserByEmail } from '../users/credentials.js';
import { withDatabase } from './database.js';
import { resetSecondFactors } from '../auth/second-factors/reset.js';
import { COMMAND_LINE } from '../audit/context.js';
import { ErasureService } from '../erasure/service.js';

/** The users service as the operator uses it: disabling a user ends their sessions, as through the API. */
const usersOf = (db: Kysely<Database>) => new UserService({ db, clock: systemClock }, revokeSessions);

async function userIdByEmail(db: Kysely<Database>, email: string): Promise<string> {
  const user = await findUserByEmail(db, email);
  if (!user) throw new Error(`No user has the e-mail ${email}.`);
  return user.id;
}

/** Service errors become one readable line and exit code 1, as every other CLI error. */
function plain(err: unknown): never {
  if (err instanceof DomainError) throw new Error(`${err.detail} (${err.code})`);
  throw err;
}

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
    .option('--must-change-password', 'the password is chosen for someone else: they must replace it at first sign-in')
    .action(async (options: { email: string; firstName: string; lastName: string; role?: string[]; mustChangePassword?: boolean }) => {
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
          mustChangePassword: options.mustChangePassword ?? false,
        });
        process.stdout.write(`Created user ${id} <${options.email}>${options.role?.length ? ` with roles ${options.role.join(', ')}` : ''}.\n`);
      });
    });
  users
    .command('disable')
    .description('Disable a user and end their sessions (refused for the last active administrator)')
    .requiredOption('--email <email>', 'e-mail address of the user')
    .action((options: { email: string }) =>
      withDatabase(async ({ db }) => {
        const id = await userIdByEmail(db, options.email);
        await usersOf(db).disable(OPERATOR, id).catch(plain);
        process.stdout.write(`Disabled user ${id} <${options.email}>.\n`);
      }),
    );
  users
    .command('reset-second-factor')
    .description('Remove every second factor and recovery code of a user (a lost phone) and end their sessions; they sign in with the password again, and an administrator is led to enrol anew')
    .requiredOption('--email <email>', 'e-mail address of the user')
    .action((options: { email: string }) =>
      withDatabase(async ({ db }) => {
        const id = await userIdByEmail(db, options.email);
        const outcome = await resetSecondFactors({ db, clock: systemClock }, revokeSessions, OPERATOR, id, COMMAND_LINE).catch(plain);
        process.stdout.write(outcome === 'reset' ? `Reset the second factors of ${id} <${options.email}>; their sessions are ended.\n` : `User ${id} <${options.email}> has no second factor.\n`);
      }),
    );
  users
    .command('set-roles')
    .description('Replace the roles of a user (none without --role; the last active administrator keeps admin)')
    .requiredOption('--email <email>', 'e-mail address of the user')
    .option('--role <role...>', 'the complete new set of role names')
    .action((options: { email: string; role?: string[] }) =>
      withDatabase(async ({ db }) => {
        const id = await userIdByEmail(db, options.email);
        const user = await usersOf(db).update(OPERATOR, id, { roles: options.role ?? [] }).catch(plain);
        process.stdout.write(`User ${id} <${options.email}> now holds: ${user.roles.join(', ') || 'no role'}.\n`);
      }),
    );
  users
    .command('erase')
    .description('Erase a person for good (docs/ERASURE.md): their name, e-mail, addresses, sign-in means and messages; what they did stays, as done by an erased person (refused for the last active administrator)')
    .option('--email <email>', 'e-mail address of the person')
    .option('--id <id>', 'id of the person (an erased person keeps theirs)')
    .option('--yes', 'erase: without it, nothing is done')
    .action((options: { email?: string; id?: string; yes?: boolean }) =>
      withDatabase(async ({ db }) => {
        if ((options.email === undefined) === (options.id === undefined)) throw new Error('Name the person with --email or --id (one of them).');
        const id = options.id ?? (await userIdByEmail(db, options.email!));
        if (!options.yes) throw new Error(`Erasing ${id} cannot be undone: run again with --yes.`);
        const { user, erased } = await new ErasureService({ db, clock: systemClock }).erase(OPERATOR, id, COMMAND_LINE).catch(plain);
        // The id only: what named the person is what was just erased.
        process.stdout.write(erased ? `Erased ${user.id}.\n` : `${user.id} was already erased.\n`);
      }),
    );
}
