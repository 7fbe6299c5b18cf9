// The sender of the outbox of mail, in every service process that sends (docs/MAIL.md). Claims due
// messages with FOR UPDATE SKIP LOCKED under a lease (a claim token and a time), so that several
// processes never take the same message at once; sends them through the transport; marks each sent
// only while its claim token is still the one it took. A process that dies between sending and
// marking leaves the message claimed until the lease runs out: it is sent again then (SMTP has no
// way to ask a server whether it got a message), with the same Message-ID. A failure is retried
// with backoff; a permanent refusal (an SMTP 5xx) or the last attempt gives up (`failed_at`).
// The transport runs outside any transaction and outside any request: a slow or unreachable
// server delays messages and never the change that wrote them.
//
// Woken by LISTEN/NOTIFY when a message is written (a dedicated connection that only listens; the
// trigger of migration 20270104T1300 notifies at the commit of the change that wrote it), so a link
// leaves at once; the poll every MAIL_POLL_INTERVAL_MS catches what a lost connection missed, and
// is all there is on the embedded database (one connection).
//
// The development mailbox (no SMTP_URL, outside production) "delivers" by marking: the message stays
// in the table, where the back office's development mailbox shows it, and is never sent later.
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import type { MailOutcome, Outcomes } from '../outcomes.js';
import type { MailTransport } from './transport.js';

export interface SendingPolicy {
  from: string;
  /** Messages claimed per round, and sent at once. */
  batch: number;
  pollIntervalMs: number;
  /** How long a claim holds: longer than one message may take to send. */
  leaseMs: number;
  /** Seconds before each retry (±20 %); after the last, the message is given up. */
  retryScheduleS: readonly number[];
}

export const DEFAULT_MAIL_RETRY_SCHEDULE_S = [10, 60, 300, 900, 1800, 3600, 7200, 14_400, 28_800, 43_200] as const;

/** The wait before retry `n` (1-based), with ±20 % jitter; null once the schedule is over. */
export function mailRetryDelayMs(schedule: readonly number[], retry: number, random: () => number = Math.random): number | null {
  const base = schedule[retry - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

/** Where claimed messages go: an SMTP server, or the development mailbox (marked delivered, nothing sent). */
export type Delivery = { kind: 'smtp'; transport: MailTransport } | { kind: 'dev_mailbox' };

interface Claimed {
  id: string;
  recipient: string;
  subject: string;
  body: string;
  html: string | null;
  language: string;
  attempts: number;
}

/** An SMTP reply code of the 5xx family: the server refuses for good (unknown mailbox, policy). */
const isPermanent = (err: unknown) => {
  const code = (err as { responseCode?: number }).responseCode;
  return typeof code === 'number' && code >= 500 && code < 600;
};

/**
 * A run of characters between separators (spaces, brackets, quotes, punctuation): mail servers name
 * the refused recipient in their replies ("550 5.1.1 <x@y>: ..."), and a run holding an `@` is
 * taken for an address. Each run is matched once, so a long reply costs linear time.
 */
const WORD = /[^\s<>()[\]"',;:]+/g;

/** What is kept (and logged) of a failure: the server's reply or the network error, short; never the message nor an address. */
const describe = (err: unknown) =>
  String((err as Error).message ?? err)
    .replace(WORD, (word) => (word.includes('@') ? '[address]' : word))
    .replace(/\s+/g, ' ')
    .slice(0, 300);

/** The channel the messages table's trigger notifies (migration 20270104T1300). */
export const MAIL_CHANNEL = 'mail_due';

type SenderDeps = { db: Kysely<Database>; clock: Clock; logger: Logger; outcomes?: Outcomes };

export class MailSender {
  private running = false;
  private loop: Promise<void> | undefined;
  /** Ends the loop's wait early (a notification, or stop). */
  private wakeUp: (() => void) | undefined;
  /** Woken while a round ran: the next round starts without waiting. */
  private wokenWhileBusy = false;
  private listener: pg.Client | undefined;

  constructor(
    private readonly deps: SenderDeps,
    private readonly policy: SendingPolicy,
    private readonly delivery: Delivery,
  ) {}

  /** Claims and sends what is due now; answers how many were claimed. For the loop and for tests. */
  async runOnce(): Promise<number> {
    const token = randomUUID();
    const claimed = await this.claim(token, this.deps.clock.now());
    if (claimed.length === 0) return 0;
    if (this.delivery.kind === 'dev_mailbox') {
      await this.markSent(claimed.map((m) => m.id), token, 'dev_mailbox');
      this.count('dev_mailbox', claimed.length);
      return claimed.length;
    }
    const transport = this.delivery.transport;
    const sent: string[] = [];
    await Promise.all(
      claimed.map(async (m) => {
        try {
          await transport.send({ id: m.id, from: this.policy.from, to: m.recipient, subject: m.subject, text: m.body, html: m.html, language: m.language });
          sent.push(m.id);
        } catch (err) {
          await this.markFailed(m, token, err).catch((e: unknown) => this.deps.logger.warn({ err: { message: (e as Error).message } }, 'mail failure not recorded'));
        }
      }),
    );
    await this.markSent(sent, token, 'smtp');
    this.count('sent', sent.length);
    return claimed.length;
  }

  /** Runs until every due message is handled (tests, the benchmark). */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  /** Starts the loop (and LISTEN when given a connection string). */
  start(listenUrl?: string): void {
    if (this.running) return;
    this.running = true;
    if (listenUrl) void this.listen(listenUrl);
    this.loop = this.rounds();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wakeUp?.();
    await this.listener?.end().catch(() => {});
    await this.loop;
    if (this.delivery.kind === 'smtp') this.delivery.transport.close();
  }

  private async rounds(): Promise<void> {
    while (this.running) {
      let claimed = 0;
      try {
        claimed = await this.runOnce();
      } catch (err) {
        // A database outage is reported by the requests; the next round tries again.
        this.deps.logger.warn({ err: { message: (err as Error).message } }, 'mail round failed');
      }
      // A full batch: more may be due at once; else wait for the next poll or notification.
      if (this.running && claimed < this.policy.batch && !this.wokenWhileBusy) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.policy.pollIntervalMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = undefined;
      }
      this.wokenWhileBusy = false;
    }
  }

  private wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenWhileBusy = true;
  }

  private async listen(url: string): Promise<void> {
    while (this.running) {
      const client = new pg.Client({ connectionString: url, application_name: 'backoffice-api-mail' });
      try {
        client.on('notification', () => this.wake());
        await client.connect();
        await client.query(`listen ${MAIL_CHANNEL}`);
        this.listener = client;
        // Written between the loop's last round and the LISTEN: looked for once more.
        this.wake();
        await new Promise<void>((resolve) => {
          client.once('error', () => resolve());
          client.once('end', () => resolve());
        });
      } catch (err) {
        this.deps.logger.warn({ err: { message: (err as Error).message } }, 'mail listener: connection lost, polling until it is back');
      } finally {
        this.listener = undefined;
        await client.end().catch(() => {});
      }
      if (this.running) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  private count(outcome: MailOutcome, n = 1): void {
    this.deps.outcomes?.mail?.(outcome, n);
  }

  private async claim(token: string, now: Date): Promise<Claimed[]> {
    const until = new Date(now.getTime() + this.policy.leaseMs);
    const { rows } = await sql<Claimed>`
      update messages m set claim_token = ${token}, claimed_until = ${until}, attempts = m.attempts + 1
      where m.id in (
        select id from messages
        where sent_at is null and failed_at is null and next_attempt_at <= ${now}
          and (claimed_until is null or claimed_until <= ${now})
        order by next_attempt_at
        limit ${this.policy.batch}
        for update skip locked)
      returning m.id, m.recipient, m.subject, m.body, m.html, m.language, m.attempts`.execute(this.deps.db);
    return rows;
  }

  private async markSent(ids: string[], token: string, via: 'smtp' | 'dev_mailbox'): Promise<void> {
    if (ids.length === 0) return;
    await this.deps.db
      .updateTable('messages')
      .set({ sent_at: this.deps.clock.now(), delivered_via: via, claim_token: null, claimed_until: null, last_error: null })
      .where('id', 'in', ids)
      .where('claim_token', '=', token)
      .execute();
  }

  private async markFailed(message: Claimed, token: string, err: unknown): Promise<void> {
    const now = this.deps.clock.now();
    const delay = isPermanent(err) ? null : mailRetryDelayMs(this.policy.retryScheduleS, message.attempts);
    const givenUp = delay === null;
    await this.deps.db
      .updateTable('messages')
      .set({
        claim_token: null,
        claimed_until: null,
        last_error: describe(err),
        ...(givenUp ? { failed_at: now } : { next_attempt_at: new Date(now.getTime() + delay) }),
      })
      .where('id', '=', message.id)
      .where('claim_token', '=', token)
      .execute();
    this.count(givenUp ? 'given_up' : 'retried');
    // The message id and the reason; never the recipient's address or the message.
    this.deps.logger.warn({ message_id: message.id, attempts: message.attempts, error: describe(err), given_up: givenUp }, givenUp ? 'mail given up' : 'mail not sent; retrying later');
  }
}
