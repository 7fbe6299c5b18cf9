// Delivery, in every service process (docs/EVENTS.md): claim due deliveries (FOR UPDATE SKIP
// LOCKED, so each attempt is made by one process), send them with up to `concurrency` in flight,
// write how each went. Woken by LISTEN/NOTIFY on PostgreSQL (a dedicated connection, outside the
// pool, that only listens); the embedded PGlite serves one connection, so there the worker polls
// every `pollIntervalMs`, which also picks up retries as they fall due everywhere.
import pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import { recordAuditEvent } from '../audit/recorder.js';
import { DELIVERY_CHANNEL } from '../db/channels.js';
import { keyring, type Keyring } from '../auth/secrets/sealing-keys.js';
import type { Config } from '../config.js';
import * as repo from './repository.js';
import { openSealed, signatureHeader } from './secrets.js';
import { createSender, type Attempt, type Sender } from './sender.js';

/** Events fanned out per statement: a burst is relayed in steps that each hold the relay's row briefly. */
const FAN_OUT_BATCH = 500;
/**
 * How soon the relay looks again at an event held back by a transaction still running: usually one
 * of a few milliseconds, so 25 ms, then twice as long each time it is still there, up to the poll
 * (a session left open in a transaction must not keep the relay asking forty times a second).
 */
const HELD_BACK_RETRY_MS = 25;
const heldBackWaitMs = (rounds: number, pollMs: number) => Math.min(pollMs, HELD_BACK_RETRY_MS * 2 ** Math.min(rounds - 1, 16));

export interface DeliveryPolicy {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Seconds to wait before each retry (the first retry waits the first), each ±20 %. */
  retryScheduleS: readonly number[];
  disableAfterDays: number;
  pollIntervalMs: number;
  concurrency: number;
}

/** The wait before retry `n` (1-based): the schedule's, with ±20 % jitter so failing receivers are not hit in step. */
export function retryDelayMs(schedule: readonly number[], retry: number, random: () => number = Math.random): number | null {
  const base = schedule[retry - 1];
  if (base === undefined) return null;
  return Math.round(base * 1000 * (0.8 + 0.4 * random()));
}

/** Styles a payload (snake_case) into an endpoint's key style, by the contract's schema of the event. */
export type PayloadStyler = (payload: Record<string, unknown>, style: string) => unknown;

/**
 * The worker of one process. Its state (what is in flight, whether the loop runs, a wake that came
 * while it was busy) is its own fields; `start` runs the loop, `runOnce` one round of it.
 */
export class DeliveryWorker {
  // The keys that open the signing secrets: from configuration, never from the database.
  private readonly keys: Keyring;
  private readonly sender: Sender;
  private readonly leaseMs: number;
  private inFlight = 0;
  private running = false;
  private wakeUp: (() => void) | undefined;
  // A wake (a NOTIFY, a finished delivery) that came while the loop was claiming, not waiting:
  // the loop goes round again instead of sleeping until the next poll.
  private wokenWhileBusy = false;
  // Whether events may be waiting to be fanned out: after a NOTIFY (a change committed), a poll, or
  // a relay that left events behind (a full batch, or one held back by a transaction still
  // running, then looked at again within HELD_BACK_RETRY_MS). A round woken by a finished delivery
  // only claims: most rounds of a busy worker are those, and the relay's statement takes a row lock.
  private fanOutDue = true;
  private heldBackRounds = 0;
  private idleWaiters: (() => void)[] = [];
  private listener: pg.Client | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; logger: Logger; config: Pick<Config, 'sealingKeys'> },
    private readonly policy: DeliveryPolicy,
    private readonly style: PayloadStyler,
  ) {
    if (!deps.config.sealingKeys) throw new Error('the sealing keys are not resolved (withSealingKeys)');
    this.keys = keyring(deps.config.sealingKeys);
    this.sender = createSender({ allowPrivate: policy.allowPrivate, timeoutMs: policy.timeoutMs });
    this.leaseMs = policy.timeoutMs + 5_000;
  }

  /** Claims and sends what is due now; for tests and for the loop. Answers how many were claimed. */
  async runOnce(): Promise<number> {
    await this.fanOut();
    return this.claim();
  }

  /** Starts the loop (and LISTEN when given a connection string). */
  start(listenUrl?: string): void {
    const { logger } = this.deps;
    const policy = this.policy;
    if (this.running) return;
    this.running = true;
    if (listenUrl) void this.listen(listenUrl);
    this.loop = (async () => {
      while (this.running) {
        let claimed = 0;
        this.wokenWhileBusy = false;
        try {
          if (this.fanOutDue) {
            this.fanOutDue = false;
            await this.fanOut();
          }
          claimed = await this.claim();
        } catch (err) {
          this.fanOutDue = true;
          logger.warn({ err: { message: (err as Error).message } }, 'webhook worker: claim failed');
        }
        if ((claimed > 0 || this.wokenWhileBusy) && this.inFlight < policy.concurrency) continue;
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            this.fanOutDue = true; // the poll: events whose NOTIFY was missed (no LISTEN on PGlite, a lost connection)
            this.wakeUp = undefined;
            resolve();
          }, this.heldBackRounds > 0 ? heldBackWaitMs(this.heldBackRounds, policy.pollIntervalMs) : policy.pollIntervalMs);
          this.wakeUp = () => {
            clearTimeout(timer);
            this.wakeUp = undefined;
            resolve();
          };
        });
      }
    })();
  }

  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenWhileBusy = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.listener?.end().catch(() => {});
    await this.loop;
    await this.idle();
    this.sender.close();
  }

  /** Resolves when nothing is in flight. */
  idle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** The secrets that sign now (two during a rotation's grace period); none when the current one's key is not configured. */
  private secretsOf(d: repo.ClaimedDelivery, now: Date): string[] {
    const current = openSealed(this.keys, d.endpoint_id, d.secret_sealed, d.secret_key_id);
    if (current === null) return [];
    const previous =
      d.previous_secret_sealed && d.previous_secret_until && d.previous_secret_until > now ? openSealed(this.keys, d.endpoint_id, d.previous_secret_sealed, d.previous_secret_key_id) : null;
    return previous === null ? [current] : [current, previous];
  }

  private async deliver(d: repo.ClaimedDelivery): Promise<void> {
    const { db, clock, logger } = this.deps;
    const policy = this.policy;
    const now = clock.now();
    if (!d.permitted) {
      // The owner may not read this resource now: nothing is sent, and the endpoint is not failing.
      await repo.recordAttempt(db, d.id, d.attempts, { status: 'skipped', nextAttemptAt: null, statusCode: null, durationMs: null, error: 'not_permitted', response: null });
      return;
    }
    const body = JSON.stringify(this.style(d.payload, d.key_style));
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets = this.secretsOf(d, now);
    let attempt: Omit<Attempt, 'durationMs'> & { durationMs: number | null };
    if (secrets.length === 0) {
      // Sealed under a key no longer configured: nothing can sign, so nothing is sent; the attempt
      // fails and is retried on the schedule, so putting the key back in SEALING_KEYS recovers it.
      logger.error({ endpointId: d.endpoint_id, keyId: d.secret_key_id }, 'webhook secret sealed under a sealing key that is not configured: put it back in SEALING_KEYS');
      attempt = { ok: false, status: null, durationMs: null, error: 'sealing_key_missing', response: null };
    } else {
      const headers = { 'webhook-id': d.event_id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(secrets, d.event_id, timestamp, body) };
      attempt = await this.sender.post(d.url, headers, body);
    }
    const after = clock.now();
    const outcome = { statusCode: attempt.status, durationMs: attempt.durationMs, error: attempt.error, response: attempt.response };
    if (attempt.ok) {
      await repo.recordAttempt(db, d.id, d.attempts, { status: 'succeeded', nextAttemptAt: null, ...outcome });
      await repo.markEndpointHealthy(db, d.endpoint_id);
      return;
    }
    const delay = retryDelayMs(policy.retryScheduleS, d.attempts);
    await db.transaction().execute(async (trx) => {
      const written = await repo.recordAttempt(trx, d.id, d.attempts, {
        status: delay === null ? 'failed' : 'pending',
        nextAttemptAt: delay === null ? null : new Date(after.getTime() + delay),
        ...outcome,
      });
      if (!written) return;
      const disableBefore = new Date(after.getTime() - policy.disableAfterDays * 86_400_000);
      if (await repo.markEndpointFailing(trx, d.endpoint_id, after, disableBefore)) {
        await trx.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: 'failing', updated_at: after }).where('id', '=', d.endpoint_id).execute();
        await recordAuditEvent(trx, {
          type: 'webhook_endpoint_disabled',
          at: after,
          context: { actor: { type: 'system' }, requestId: null, ip: null, userAgent: null },
          target: { type: 'webhook_endpoint', id: d.endpoint_id, label: sql<string | null>`(select url from webhook_endpoints where id = ${d.endpoint_id})` },
          details: { reason: 'failing', failing_for_days: policy.disableAfterDays },
          changes: { before: { enabled: true }, after: { enabled: false } },
        });
        logger.warn({ endpointId: d.endpoint_id }, 'webhook endpoint disabled: every delivery failed for days');
      }
    });
  }

  /** Fans out the events written since the last call (a change writes only its event), a burst in batches. */
  private async fanOut(): Promise<void> {
    let fanned: { relayed: number; full: boolean; heldBack: boolean };
    do fanned = await repo.fanOutEvents(this.deps.db, FAN_OUT_BATCH);
    while (fanned.full);
    this.heldBackRounds = fanned.heldBack ? this.heldBackRounds + 1 : 0;
    if (fanned.heldBack) this.fanOutDue = true;
  }

  /** Claims what is due now, up to the free places, and sends it. */
  private async claim(): Promise<number> {
    const { db, clock, logger } = this.deps;
    const free = this.policy.concurrency - this.inFlight;
    if (free <= 0) return 0;
    const now = clock.now();
    const claimed = await repo.claimDue(db, now, new Date(now.getTime() + this.leaseMs), free);
    for (const d of claimed) {
      this.inFlight++;
      this.deliver(d)
        .catch((err: unknown) => logger.error({ err: { message: (err as Error).message }, deliveryId: d.id }, 'webhook delivery failed to record'))
        .finally(() => {
          this.inFlight--;
          if (this.inFlight === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            waiters.forEach((w) => w());
          }
          this.wake();
        });
    }
    return claimed.length;
  }

  private async listen(url: string) {
    const { logger } = this.deps;
    while (this.running) {
      const client = new pg.Client({ connectionString: url, application_name: 'backoffice-api-webhooks' });
      try {
        client.on('notification', () => {
          this.fanOutDue = true;
          this.wake();
        });
        await client.connect();
        await client.query(`listen ${DELIVERY_CHANNEL}`);
        this.listener = client;
        await new Promise<void>((resolve) => {
          client.once('error', () => resolve());
          client.once('end', () => resolve());
        });
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'webhook listener: connection lost, polling until it is back');
      } finally {
        this.listener = undefined;
        await client.end().catch(() => {});
      }
      if (this.running) await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
