// The mail of this deployment, built once from the configuration: the sender (SMTP, the
// development mailbox's marking, or none when nothing here sends) and the development mailbox's
// reading, which exists only when it is on (docs/MAIL.md).
import type { Dependencies } from '../dependencies.js';
import { MailSender, DEFAULT_MAIL_RETRY_SCHEDULE_S } from './sender.js';
import { smtpTransport, type MailTransport } from './transport.js';
import { devMailbox } from './dev-mailbox.js';
import { listNotices } from './notices.js';

export function mailService(deps: Pick<Dependencies, 'db' | 'clock' | 'logger' | 'config' | 'outcomes'>, options: { transport?: MailTransport } = {}) {
  const { mail } = deps.config;
  const policy = { from: mail.from, batch: mail.batch, pollIntervalMs: mail.pollIntervalMs, leaseMs: mail.timeoutMs * 6 + 5_000, retryScheduleS: DEFAULT_MAIL_RETRY_SCHEDULE_S };
  const transport = options.transport ?? (mail.smtp ? smtpTransport(mail.smtp, mail.timeoutMs) : undefined);
  const sender: MailSender | undefined = transport
    ? new MailSender(deps, policy, { kind: 'smtp', transport })
    : mail.devMailbox
      ? new MailSender(deps, policy, { kind: 'dev_mailbox' })
      : undefined;
  return {
    /** The sender, when this deployment has one; started by src/main.ts where MAIL_SEND is on. */
    sender,
    /** The development mailbox's messages, when it is on; undefined in production. */
    devMailbox: mail.devMailbox ? devMailbox(deps.db) : undefined,
    /** A person's security notices, newest first. */
    notices: (userId: string) => listNotices(deps.db, userId),
  };
}

export type MailService = ReturnType<typeof mailService>;
