// `backoffice sealing-keys new <id>` prints a new key line for SEALING_KEYS (nothing is stored);
// `backoffice sealing-keys reseal` moves every sealed value to the key that comes first in the
// configuration, and says what still needs an older key (docs/DEPLOYMENT.md, "The sealing keys").
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { keyringOf, newSealingKeyLine, withSealingKeys } from '../auth/secrets/sealing-keys.js';
import { resealAll } from '../maintenance/reseal.js';
import { withDatabase } from './database.js';

export function registerSealingKeys(program: Command): void {
  const group = program.command('sealing-keys').description('The keys that seal second-factor and webhook secrets and key stored digests (kept out of the database)');
  group
    .command('new <id>')
    .description('Print a new key line, <id>:<base64>, to put first in SEALING_KEYS or SEALING_KEYS_FILE')
    .action((id: string) => {
      if (!/^[A-Za-z0-9_-]{1,40}$/.test(id)) throw new Error('the id is 1-40 letters, digits, - or _');
      process.stdout.write(`${newSealingKeyLine(id)}\n`);
    });
  group
    .command('reseal')
    .description('Seal every value again under the first configured key; report what still needs an older one')
    .action(() =>
      withDatabase(async ({ db }) => {
        const keys = keyringOf(withSealingKeys(loadConfig()));
        const report = await resealAll(db, keys);
        const older = Object.entries(report.recoveryCodesUnderOlderKeys);
        process.stdout.write(
          [
            `Current key: ${keys.current.id}.`,
            `Authenticator-app keys sealed again: ${report.totpResealed}; that no configured key opens: ${report.totpUnopenable}.`,
            `Webhook signing secrets sealed again: ${report.webhookSecretsResealed}; that no configured key opens: ${report.webhookSecretsUnopenable}.`,
            `Recovery codes keyed: ${report.recoveryCodesKeyed}; Idempotency-Key fingerprints keyed: ${report.fingerprintsKeyed}.`,
            `Identity providers' client secrets sealed again: ${report.clientSecretsResealed}; that no configured key opens: ${report.clientSecretsUnopenable}.`,
            older.length === 0
              ? 'Nothing needs an older key any more: it may be removed from the configuration.'
              : `Recovery codes still keyed under older keys (kept until their owners make new ones): ${older.map(([id, n]) => `${id}: ${n}`).join(', ')}.`,
            '',
          ].join('\n'),
        );
      }),
    );
}
