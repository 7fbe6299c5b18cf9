// Sending the outbox of mail: BENCH_MESSAGES (1,000) messages queued, then sent by one sender
// (the service's src/mail/sender.ts, through nodemailer's pooled SMTP connections) to a local SMTP
// server (smtp-server on loopback, which only counts what it receives). The target:
// 1,000 messages in under 10 s. Each round queues afresh and times from the first claim to the
// last message marked sent; BENCH_ROUNDS rounds (3). Run alone (docs/BENCHMARKS.md).
//   node --import tsx bench/mail-send.ts            # 1,000 messages
//   BENCH_MESSAGES=5 BENCH_ROUNDS=1 node --import tsx bench/mail-send.ts   # the script works
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { createLogger } from '../src/logger.js';
import { systemClock } from '../src/clock.js';
import { queueMessage } from '../src/mail/outbox.js';
import { MailSender, DEFAULT_MAIL_RETRY_SCHEDULE_S } from '../src/mail/sender.js';
import { smtpTransport } from '../src/mail/transport.js';
import { parseSmtpUrl, type SmtpSettings } from '../src/smtp-url.js';
import { benchDatabase } from './support/database.js';
import { machineLine, markdownTable, median, print } from './support/measure.js';

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 1000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BATCH = Number(process.env.BENCH_MAIL_BATCH ?? 50);
const TARGET_S = 10;

async function main() {
  let received = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['AUTH'],
    logger: false,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received += 1;
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  const settings = parseSmtpUrl(`smtp://127.0.0.1:${port}?tls_verify=off`) as SmtpSettings;
  const database = await benchDatabase('bench_mail_send');
  const { db } = database;
  const seconds: number[] = [];
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      await db.deleteFrom('messages').execute();
      const now = new Date();
      for (let i = 0; i < MESSAGES; i += 500) {
        await db.transaction().execute(async (trx) => {
          for (let j = i; j < Math.min(MESSAGES, i + 500); j++) {
            await queueMessage(trx, { recipient: `person${j}@example.com`, kind: 'password_changed', language: j % 2 ? 'fr' : 'en', values: { at: now, through: 'change' }, now });
          }
        });
      }
      received = 0;
      const sender = new MailSender(
        { db, clock: systemClock, logger: createLogger('warn') },
        { from: 'Back office <no-reply@backoffice.local>', batch: BATCH, pollIntervalMs: 1000, leaseMs: 65_000, retryScheduleS: DEFAULT_MAIL_RETRY_SCHEDULE_S },
        { kind: 'smtp', transport: smtpTransport(settings, 10_000) },
      );
      const started = performance.now();
      const sent = await sender.drain();
      const elapsed = (performance.now() - started) / 1000;
      await sender.stop();
      const left = await db.selectFrom('messages').select(db.fn.countAll<string>().as('n')).where('sent_at', 'is', null).executeTakeFirstOrThrow();
      if (sent !== MESSAGES || received !== MESSAGES || Number(left.n) !== 0) throw new Error(`round ${round}: claimed ${sent}, received ${received}, left unsent ${left.n} of ${MESSAGES}`);
      seconds.push(elapsed);
      print(`round ${round}: ${MESSAGES} messages in ${elapsed.toFixed(2)} s (${Math.round(MESSAGES / elapsed)}/s)`);
    }
  } finally {
    await database.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const mid = median(seconds);
  print();
  print(machineLine(`one sender, batch ${BATCH}, nodemailer pool of 4 connections, smtp-server on loopback`));
  print(markdownTable(['messages', 'rounds', 'median s', 'messages/s', `target (< ${TARGET_S} s for 1,000)`], [[String(MESSAGES), String(ROUNDS), mid.toFixed(2), String(Math.round(MESSAGES / mid)), MESSAGES < 1000 ? 'n/a (fewer than 1,000)' : (mid * 1000) / MESSAGES < TARGET_S ? 'met' : 'missed']]));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
