// `backoffice api-keys create|revoke`: the operator's way to issue a key (the secret is printed
// once, on stdout, and never stored) and to revoke one.
import { InvalidArgumentError, type Command } from 'commander';
import { apiKeyService } from '../api-keys/service.js';
import { OPERATOR } from '../auth/authority.js';
import { isPermission } from '../auth/permissions.js';
import { systemClock } from '../clock.js';
import { DomainError } from '../errors.js';
import { UUID } from '../uuid.js';
import { withDatabase } from './database.js';

function permissionList(value: string): string[] {
  const list = value.split(',').map((p) => p.trim()).filter(Boolean);
  const unknown = list.filter((p) => !isPermission(p));
  if (list.length === 0 || unknown.length > 0) throw new InvalidArgumentError(`unknown permission(s): ${unknown.join(', ') || '(none given)'}`);
  return list;
}

function futureDate(value: string): string {
  if (Number.isNaN(new Date(value).getTime())) throw new InvalidArgumentError('expected an ISO 8601 date, e.g. 2027-05-01T00:00:00Z');
  return new Date(value).toISOString();
}


/** Service errors become one readable line and exit code 1, as every other CLI error. */
function plain(err: unknown): never {
  if (err instanceof DomainError) throw new Error(err.detail);
  throw err;
}

export function registerApiKeys(program: Command): void {
  const keys = program.command('api-keys').description('API keys for third-party applications');
  keys
    .command('create')
    .description('Create an API key and print its secret (shown this once)')
    .requiredOption('--name <name>', 'unique name of the key')
    .requiredOption('--permissions <list>', 'comma-separated permissions, e.g. users.list,users.read', permissionList)
    .option('--expires-at <date>', 'expiration date (recommended), ISO 8601', futureDate)
    .action((options: { name: string; permissions: string[]; expiresAt?: string }) =>
      withDatabase(async ({ db }) => {
        const { key, secret } = await apiKeyService({ db, clock: systemClock })
          .create(OPERATOR, { name: options.name, permissions: options.permissions, expires_at: options.expiresAt })
          .catch(plain);
        process.stderr.write(`Created API key ${key.id} (${key.name})${key.expires_at ? '' : ' without an expiration date (not recommended)'}.\n`);
        process.stderr.write('Copy the secret now: it is never shown again.\n');
        process.stdout.write(`${secret}\n`);
      }),
    );
  keys
    .command('revoke')
    .description('Revoke an API key, effective on the next request')
    .argument('<id>', 'id of the key', (value: string) => {
      if (!UUID.test(value.toLowerCase())) throw new InvalidArgumentError('expected the key id (a UUID)');
      return value;
    })
    .action((id: string) =>
      withDatabase(async ({ db }) => {
        await apiKeyService({ db, clock: systemClock }).revoke(OPERATOR, id).catch(plain);
        process.stdout.write(`Revoked API key ${id}.\n`);
      }),
    );
}
