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

export interface DeliveryWorker {
  /** Claims and sends what is due now; for tests and for the loop. Answers how many were claimed. */
  runOnce(): Promise<number>;
  /** Starts the loop (and LISTEN when given a connection string). */
  start(listenUrl?: string): void;
  wake(): void;
  stop(): Promise<void>;
  /** Resolves when nothing is in flight. */
  idle(): Promise<void>;
}

export function deliveryWorker(deps: { db: Kysely<Database>; clock: Clock; logger: Logger; config: Pick<Config, 'sealingKeys'> }, policy: DeliveryPolicy, style: PayloadStyler): DeliveryWorker {
  const { db, clock, logger } = deps;
  // The keys that open the signing secrets: from configuration, never from the database.
  if (!deps.config.sealingKeys) throw new Error('the sealing keys are not resolved (withSealingKeys)');
  const keys: Keyring = keyring(deps.config.sealingKeys);
  const sender: Sender = createSender({ allowPrivate: policy.allowPrivate, timeoutMs: policy.timeoutMs });
  const leaseMs = policy.timeoutMs + 5_000;
  let inFlight = 0;
  let running = false;
  let wakeUp: (() => void) | undefined;
  // A wake (a NOTIFY, a finished delivery) that came while the loop was claiming, not waiting:
  // the loop goes round again instead of sleeping until the next poll.
  let wokenWhileBusy = false;
  // Whether events may be waiting to be fanned out: after a NOTIFY (a change committed), a poll, or
  // a relay that left events behind (a full batch, or one held back by a transaction still
  // running, then looked at again within HELD_BACK_RETRY_MS). A round woken by a finished delivery
  // only claims: most rounds of a busy worker are those, and the relay's statement takes a row lock.
  let fanOutDue = true;
  let heldBackRounds = 0;
  let idleWaiters: (() => void)[] = [];
  let listener: pg.Client | undefined;
  let loop: Promise<void> | undefined;

  /** The secrets that sign now (two during a rotation's grace period); none when the current one's key is not configured. */
  function secretsOf(d: repo.ClaimedDelivery, now: Date): string[] {
    const current = openSealed(keys, d.endpoint_id, d.secret_sealed, d.secret_key_id);
    if (current === null) return [];
    const previous =
      d.previous_secret_sealed && d.previous_secret_until && d.previous_secret_until > now ? openSealed(keys, d.endpoint_id, d.previous_secret_sealed, d.previous_secret_key_id) : null;
    return previous === null ? [current] : [current, previous];
  }

  async function deliver(d: repo.ClaimedDelivery): Promise<void> {
    const now = clock.now();
    if (!d.permitted) {
      // The owner may not read this resource now: nothing is sent, and the endpoint is not failing.
      await repo.recordAttempt(db, d.id, d.attempts, { status: 'skipped', nextAttemptAt: null, statusCode: null, durationMs: null, error: 'not_permitted', response: null });
      return;
    }
    const body = JSON.stringify(style(d.payload, d.key_style));
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets = secretsOf(d, now);
    let attempt: Omit<Attempt, 'durationMs'> & { durationMs: number | null };
    if (secrets.length === 0) {
      // Sealed under a key no longer configured: nothing can sign, so nothing is sent; the attempt
      // fails and is retried on the schedule, so putting the key back in SEALING_KEYS recovers it.
      logger.error({ endpointId: d.endpoint_id, keyId: d.secret_key_id }, 'webhook secret sealed under a sealing key that is not configured: put it back in SEALING_KEYS');
      attempt = { ok: false, status: null, durationMs: null, error: 'sealing_key_missing', response: null };
    } else {
      const headers = { 'webhook-id': d.event_id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatureHeader(secrets, d.event_id, timestamp, body) };
      attempt = await sender.post(d.url, headers, body);
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
  async function fanOut(): Promise<void> {
    let fanned: { relayed: number; full: boolean; heldBack: boolean };
    do fanned = await repo.fanOutEvents(db, FAN_OUT_BATCH);
    while (fanned.full);
    heldBackRounds = fanned.heldBack ? heldBackRounds + 1 : 0;
    if (fanned.heldBack) fanOutDue = true;
  }

  async function runOnce(): Promise<number> {
    await fanOut();
    return claim();
  }

  /** Claims what is due now, up to the free places, and sends it. */
  async function claim(): Promise<number> {
    const free = policy.concurrency - inFlight;
    if (free <= 0) return 0;
    const now = clock.now();
    const claimed = await repo.claimDue(db, now, new Date(now.getTime() + leaseMs), free);
    for (const d of claimed) {
      inFlight++;
      deliver(d)
        .catch((err: unknown) => logger.error({ err: { message: (err as Error).message }, deliveryId: d.id }, 'webhook delivery failed to record'))
        .finally(() => {
          inFlight--;
          if (inFlight === 0) {
            const waiters = idleWaiters;
            idleWaiters = [];
            waiters.forEach((w) => w());
          }
          wake();
        });
    }
    return claimed.length;
  }

  function wake() {
    if (wakeUp) wakeUp();
    else wokenWhileBusy = true;
  }

  async function listen(url: string) {
    while (running) {
      const client = new pg.Client({ connectionString: url, application_name: 'backoffice-api-webhooks' });
      try {
        client.on('notification', () => {
          fanOutDue = true;
          wake();
        });
        await client.connect();
        await client.query(`listen ${DELIVERY_CHANNEL}`);
        listener = client;
        await new Promise<void>((resolve) => {
          client.once('error', () => resolve());
          client.once('end', () => resolve());
        });
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'webhook listener: connection lost, polling until it is back');
      } finally {
        listener = undefined;
        await client.end().catch(() => {});
      }
      if (running) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  return {
    runOnce,
    wake,
    start(listenUrl) {
      if (running) return;
      running = true;
      if (listenUrl) void listen(listenUrl);
      loop = (async () => {
        while (running) {
          let claimed = 0;
          wokenWhileBusy = false;
          try {
            if (fanOutDue) {
              fanOutDue = false;
              await fanOut();
            }
            claimed = await claim();
          } catch (err) {
            fanOutDue = true;
            logger.warn({ err: { message: (err as Error).message } }, 'webhook worker: claim failed');
          }
          if ((claimed > 0 || wokenWhileBusy) && inFlight < policy.concurrency) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => {
              fanOutDue = true; // the poll: events whose NOTIFY was missed (no LISTEN on PGlite, a lost connection)
              wakeUp = undefined;
              resolve();
            }, heldBackRounds > 0 ? heldBackWaitMs(heldBackRounds, policy.pollIntervalMs) : policy.pollIntervalMs);
            wakeUp = () => {
              clearTimeout(timer);
              wakeUp = undefined;
              resolve();
            };
          });
        }
      })();
    },
    async stop() {
      running = false;
      wake();
      await listener?.end().catch(() => {});
      await loop;
      await this.idle();
      sender.close();
    },
    idle() {
      return inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
