// `backoffice audit verify`: checks the audit trail's seal chain and every sealed event still
// present; names the first seal or event that does not match and exits 1. `backoffice audit seal`
// seals the events waiting now (the maintenance step does it every SWEEP_INTERVAL_S).
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import { sealAuditEvents } from '../audit/seal.js';
import { verifyAuditTrail } from '../audit/verify.js';
import { withDatabase } from './database.js';

export function registerAudit(program: Command): void {
  const audit = program.command('audit').description('The tamper-evident audit trail');
  audit
    .command('verify')
    .description('Check the seal chain and re-hash every sealed event; exit 1 naming the first mismatch')
    .action(() =>
      withDatabase(async ({ db }) => {
        const started = Date.now();
        const { auditRetentionS, retention } = loadConfig().sweep;
        const report = await verifyAuditTrail(db, { now: new Date(), retentionS: auditRetentionS, signInAddressRetentionS: retention.signInAddressRetentionS });
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        if (!report.ok) {
          process.stdout.write(`FAILED: ${report.problem}\n`);
          process.exitCode = 1;
          return;
        }
        process.stdout.write(
          `OK: ${report.seals} seals (${report.sealsWithoutEvents} with their events deleted by retention), ` +
            `${report.eventsChecked} events checked, ${report.eventsNotYetSealed} not sealed yet, in ${seconds} s.\n` +
            `Head: ${report.head ?? 'none (nothing sealed yet)'}\n`,
        );
      }),
    );
  audit
    .command('seal')
    .description('Seal the audit events recorded since the last seal, now')
    .action(() =>
      withDatabase(async ({ db }) => {
        const sealed = await sealAuditEvents(db, new Date());
        process.stdout.write(`Sealed ${sealed.events} events in ${sealed.seals} seals.\n`);
      }),
    );
}
