// The service's Prometheus metrics (prom-client), in one registry: what docs/DEPLOYMENT.md lists
// for dashboards and alerts. Requests are observed by the HTTP edge (src/http/request-metrics.ts)
// and domain outcomes through the Outcomes interface (src/outcomes.ts), both noted in memory per
// request and handed to prom-client in a loop when Prometheus scrapes, as the pool, hashing and
// seal figures are read then.
// Every label takes one of a fixed few values (an operationId, a status class, an outcome, a
// state): never a path, a user, an e-mail or a key id.
import client from 'prom-client';
import type { Kysely } from 'kysely';
import type pg from 'pg';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import type { Outcomes, SignInOutcome, RefreshOutcome, ApiKeyOutcome, MailOutcome } from '../outcomes.js';
import { mailBacklog } from '../mail/backlog.js';
import { hashingPoolState } from '../auth/secrets/passwords.js';
import { sealLagSeconds } from '../audit/seal.js';

export interface MetricSources {
  db: Kysely<Database>;
  pool: pg.Pool;
  clock: Clock;
}

/** The label of a request no operation of the contract matched (probes, the web app, a 404). */
export const NO_OPERATION = 'none';

// From a probe's fraction of a millisecond to a slow sign-in's seconds.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
/** Answers noted at most before they go to the histogram without a scrape: a bound on what waits in memory. */
const ANSWERS_PER_BATCH = 1024;

const SIGN_IN_OUTCOMES: readonly SignInOutcome[] = ['succeeded', 'failed', 'throttled'];
const REFRESH_OUTCOMES: readonly RefreshOutcome[] = ['issued', 'replayed', 'reused', 'refused'];
const API_KEY_OUTCOMES: readonly ApiKeyOutcome[] = ['accepted', 'invalid', 'expired', 'creator_disabled', 'ip_not_allowed'];
const MAIL_OUTCOMES: readonly MailOutcome[] = ['sent', 'dev_mailbox', 'retried', 'given_up'];

/**
 * A counter of outcomes whose every outcome is a series from the start (0 until it happens), so
 * rates and alerts see it. Counted in a plain record and handed to prom-client when Prometheus
 * scrapes: its inc() checks and hashes the labels at every call, on the hot path of every request
 * made with an API key (bench/metrics-cost.ts, docs/BENCHMARKS.md).
 */
function outcomeCounter<T extends string>(registry: client.Registry, name: string, help: string, outcomes: readonly T[]) {
  const counts = Object.fromEntries(outcomes.map((outcome) => [outcome, 0])) as Record<T, number>;
  new client.Counter({
    name,
    help,
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const outcome of outcomes) this.inc({ outcome }, counts[outcome]);
    },
  });
  return (outcome: T) => {
    counts[outcome] += 1;
  };
}

export function serviceMetrics({ db, pool, clock }: MetricSources) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry });
  const registers = [registry];

  // Requests are observed in batches: each answer appends its figures to `answered`, and they go
  // to the histogram in one loop when Prometheus scrapes (collect) or when a batch is full. The
  // same observations as one observe() per request, which on the hot path cost several times what
  // the loop costs per observation (bench/metrics-cost.ts, docs/BENCHMARKS.md).
  const answered = { operations: [] as string[], statusClasses: [] as string[], seconds: [] as number[] };
  const observeAnswered = () => {
    const { operations, statusClasses, seconds } = answered;
    for (let i = 0; i < seconds.length; i++) requests.observe({ operation: operations[i]!, status_class: statusClasses[i]! }, seconds[i]!);
    operations.length = 0;
    statusClasses.length = 0;
    seconds.length = 0;
  };
  const requests = new client.Histogram({
    name: 'backoffice_http_request_duration_seconds',
    help: 'Requests answered, by operationId (none: outside the contract) and status class, and how long they took',
    labelNames: ['operation', 'status_class'],
    buckets: DURATION_BUCKETS,
    registers,
    collect: observeAnswered,
  });

  const outcomes: Outcomes = {
    signIn: outcomeCounter(registry, 'backoffice_sign_ins_total', 'Sign-ins (POST /sessions) by outcome', SIGN_IN_OUTCOMES),
    refresh: outcomeCounter(registry, 'backoffice_token_refreshes_total', 'Token refreshes (POST /tokens) by outcome', REFRESH_OUTCOMES),
    apiKeyAuthentication: outcomeCounter(registry, 'backoffice_api_key_authentications_total', 'Requests authenticated by an x-api-key, by outcome', API_KEY_OUTCOMES),
    mail: (outcome, n) => {
      mailCounts[outcome] += n;
    },
  };

  new client.Gauge({
    name: 'backoffice_db_pool_connections',
    help: 'Database connections of this process, by state (in_use: lent to a request; idle: open, free)',
    labelNames: ['state'],
    registers,
    collect() {
      this.set({ state: 'in_use' }, pool.totalCount - pool.idleCount);
      this.set({ state: 'idle' }, pool.idleCount);
    },
  });
  new client.Gauge({
    name: 'backoffice_db_pool_waiting',
    help: 'Queries waiting for a free database connection of this process',
    registers,
    collect() {
      this.set(pool.waitingCount);
    },
  });
  new client.Gauge({
    name: 'backoffice_password_hash_threads',
    help: 'Argon2 hashing threads, by state (busy, idle)',
    labelNames: ['state'],
    registers,
    collect() {
      const { threads, busy } = hashingPoolState();
      this.set({ state: 'busy' }, busy);
      this.set({ state: 'idle' }, threads - busy);
    },
  });
  new client.Gauge({
    name: 'backoffice_password_hash_queue',
    help: 'Password hashes and verifications waiting for a hashing thread',
    registers,
    collect() {
      this.set(hashingPoolState().queued);
    },
  });
  new client.Counter({
    name: 'backoffice_password_hashes_total',
    help: 'Password hashes and verifications done',
    registers,
    collect() {
      this.reset();
      this.inc(hashingPoolState().completed);
    },
  });
  new client.Gauge({
    name: 'backoffice_audit_seal_lag_seconds',
    help: 'How long the oldest audit event not sealed yet has waited (0: all sealed); the same figure from every process',
    registers,
    aggregator: 'max',
    async collect() {
      // NaN (no figure) while the database does not answer; the pool gauges and the 503s say why.
      this.set(await sealLagSeconds(db, clock.now()).catch(() => Number.NaN));
    },
  });

  // Last, after the pool's figures were read: the outbox of mail, what this process's sender did, and what waits (read from the database when
  // scraped, the same figure from every process).
  const mailCounts = Object.fromEntries(MAIL_OUTCOMES.map((outcome) => [outcome, 0])) as Record<MailOutcome, number>;
  new client.Counter({
    name: 'backoffice_mail_messages_total',
    help: 'Messages of the outbox of mail by how a sending attempt ended (sent, dev_mailbox, retried, given_up)',
    labelNames: ['outcome'],
    registers,
    collect() {
      this.reset();
      for (const outcome of MAIL_OUTCOMES) this.inc({ outcome }, mailCounts[outcome]);
    },
  });
  // One query per scrape for both gauges (the first to collect starts it; the other reads it).
  let scraped: ReturnType<typeof mailBacklog> | undefined;
  const backlog = () => {
    if (!scraped) {
      scraped = mailBacklog(db, clock.now()).catch(() => ({ waiting: Number.NaN, failed: Number.NaN, oldestWaitingS: Number.NaN }));
      void scraped.finally(() => setImmediate(() => (scraped = undefined)));
    }
    return scraped;
  };
  new client.Gauge({
    name: 'backoffice_mail_backlog',
    help: 'Messages of the outbox of mail not sent, by state (waiting: to be sent or retried; failed: given up)',
    labelNames: ['state'],
    registers,
    aggregator: 'max',
    async collect() {
      const figures = await backlog();
      this.set({ state: 'waiting' }, figures.waiting);
      this.set({ state: 'failed' }, figures.failed);
    },
  });
  new client.Gauge({
    name: 'backoffice_mail_oldest_waiting_seconds',
    help: 'How long the oldest message waiting to be sent has waited (0: none waits)',
    registers,
    aggregator: 'max',
    async collect() {
      this.set((await backlog()).oldestWaitingS);
    },
  });

  return {
    registry,
    outcomes,
    /** One answered request: its operationId (undefined outside the contract), status and duration. */
    observeRequest(operationId: string | undefined, status: number, seconds: number) {
      answered.operations.push(operationId ?? NO_OPERATION);
      answered.statusClasses.push(STATUS_CLASSES[Math.floor(status / 100) - 1] ?? '5xx');
      answered.seconds.push(seconds);
      if (answered.seconds.length >= ANSWERS_PER_BATCH) observeAnswered();
    },
  };
}

export type ServiceMetrics = ReturnType<typeof serviceMetrics>;
