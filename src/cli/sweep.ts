// `backoffice sweep`: the maintenance step now (what every server process does every
// SWEEP_INTERVAL_S; for operators who run it from a scheduler instead): delete expired sign-in
// attempts and old sessions, seal the audit events waiting, delete those past their retention.
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { maintain } from '../maintenance/sweeper.js';
import { withDatabase } from './database.js';

export function registerSweep(program: Command): void {
  program
    .command('sweep')
    .description('Delete expired sign-in attempts and old sessions, seal audit events, delete audit events, events, webhook deliveries and messages past their retention')
    .action(() =>
      withDatabase(async ({ db }) => {
        const { policy, auditRetentionS, retention } = loadConfig().sweep;
        const done = await maintain(db, new Date(), policy, auditRetentionS, retention);
        process.stdout.write(`Deleted ${done.signInAttempts} expired sign-in attempts, ${done.signInChallenges} expired sign-in challenges, ${done.sessions} old sessions, ${done.idempotencyAnswers} expired idempotency answers and ${done.oidcFlows} unfinished sign-ins at identity providers.\n`);
        process.stdout.write(`Sealed ${done.auditEventsSealed} audit events; deleted ${done.auditEventsDeleted} past their retention; erased the addresses of ${done.auditAddressesErased} past SIGN_IN_ADDRESS_RETENTION_DAYS.\n`);
        process.stdout.write(`Deleted ${done.events} events, ${done.webhookDeliveries} webhook deliveries and ${done.messages} messages past their retention.\n`);
      }),
    );
}
