// Deletes rows that have served their purpose, so tables stay the size of the live data:
//  - sign-in attempts older than the throttle window (they no longer count), and sign-in
//    challenges past their 5 minutes (src/auth/sessions/challenges.ts), passkey challenges with them
//    (registrations and passwordless sign-ins begun: src/auth/second-factors/passkeys.ts);
//  - sessions over (signed out, revoked, expired or idle) for longer than the retention period,
//    with their token sets (cascade). A live session keeps every generation of its tokens: an old
//    refresh token presented again must still be recognised as reused.
//  - answers kept for an Idempotency-Key past their 24 hours (src/idempotency).
// maintain() also deletes, by configuration (RetentionPolicy, docs/PRIVACY.md): the events of the
// feed and webhooks past EVENT_RETENTION_DAYS (their deliveries with them), finished deliveries
// past WEBHOOK_DELIVERY_RETENTION_DAYS (one still being retried stays), and messages of the mail
// outbox past MESSAGE_RETENTION_DAYS (sent or not: past that, a link in one has expired anyway).
// API keys are kept: they are the record of who did what. The maintenance step (maintain(), below)
// also seals the audit events recorded since its last run and deletes those past their retention.
// Every server process runs it on a timer (SWEEP_INTERVAL_S); `backoffice sweep` does it once.
// Several processes sweeping at once skip each other's rows (FOR UPDATE SKIP LOCKED).
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../db/schema.js';
import type { Clock } from '../clock.js';
import { sealAuditEvents } from '../audit/seal.js';
import { deleteExpiredAuditEvents, eraseExpiredSignInAddresses } from '../audit/retention.js';
import { livenessAt, sessionIsLive } from '../auth/sessions/liveness.js';
import { STEP_UP_REFUSAL_WINDOW_S } from '../auth/sessions/step-up-refusals.js';
import { deleteExpiredAnswers } from '../idempotency/repository.js';
import { deleteExpiredEvents } from '../audit/outbox.js';
import { deleteEndedCounters } from '../limits/repository.js';
import { deleteOldUsage } from '../api-keys/usage.js';
import { RETENTION_DEFAULT_DAYS } from '../config.js';

export interface SweepPolicy {
  throttleWindowS: number;
  sessionIdleTimeoutS: number;
  sessionRetentionS: number;
}

/** How long the rows kept for a while are kept (seconds): src/config.ts, docs/PRIVACY.md. */
export interface RetentionPolicy {
  eventRetentionS: number;
  deliveryRetentionS: number;
  messageRetentionS: number;
  /** Sign-in addresses and user agents in the audit trail, erased without breaking the seal (docs/ERASURE.md); unset: kept with their events. */
  signInAddressRetentionS?: number;
}

const DAY_S = 24 * 3600;
export const DEFAULT_RETENTION: RetentionPolicy = {
  eventRetentionS: RETENTION_DEFAULT_DAYS.events * DAY_S,
  deliveryRetentionS: RETENTION_DEFAULT_DAYS.webhookDeliveries * DAY_S,
  messageRetentionS: RETENTION_DEFAULT_DAYS.messages * DAY_S,
  signInAddressRetentionS: RETENTION_DEFAULT_DAYS.signInAddresses * DAY_S,
};

export interface SweepResult {
  signInAttempts: number;
  /** Second-step challenges of sign-ins past their 5 minutes (src/auth/sessions/challenges.ts), and passkey challenges past theirs. */
  signInChallenges: number;
  sessions: number;
  idempotencyAnswers: number;
  /** Sign-ins at an identity provider not finished within OIDC_FLOW_TTL_S. */
  oidcFlows: number;
}

// sign_in_failures has no index on failed_at (one less index to write on every sign-in attempt):
// the table holds one window of attempts, which a sequential scan every few minutes reads quickly.
/** Rows per statement: short transactions, so a large backlog never holds locks for long. */
const BATCH = 5000;

async function inBatches(deleteBatch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const deleted = await deleteBatch();
    total += deleted;
    if (deleted < BATCH) return total;
  }
}

export async function sweep(db: Kysely<Database>, now: Date, policy: SweepPolicy): Promise<SweepResult> {
  const attemptsBefore = new Date(now.getTime() - policy.throttleWindowS * 1000);
  const signInAttempts = await inBatches(async () => {
    const result = await sql`
      delete from sign_in_failures where id in (
        select id from sign_in_failures where failed_at <= ${attemptsBefore} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }) + await inBatches(async () => {
    // Wrong second-factor codes past the daily cap's day (src/auth/second-factors/service.ts).
    const result = await sql`
      delete from second_factor_code_failures where id in (
        select id from second_factor_code_failures where failed_at <= ${new Date(now.getTime() - 24 * 3600 * 1000)} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }) + await inBatches(async () => {
    // Refused step-ups past their window (src/auth/sessions/step-up-refusals.ts).
    const result = await sql`
      delete from step_up_refusals where id in (
        select id from step_up_refusals where refused_at <= ${new Date(now.getTime() - STEP_UP_REFUSAL_WINDOW_S * 1000)} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });

  // Over (no longer live, src/auth/sessions/liveness.ts) already at the start of the retention period.
  const overBefore = livenessAt(new Date(now.getTime() - policy.sessionRetentionS * 1000), policy.sessionIdleTimeoutS);
  const sessions = await inBatches(async () => {
    const result = await sql`
      delete from sessions where id in (
        select id from sessions
        where not ${sessionIsLive('sessions', overBefore)}
        limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  const signInChallenges = await inBatches(async () => {
    const result = await sql`
      delete from sign_in_challenges where id in (
        select id from sign_in_challenges where expires_at <= ${now} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  }) + await inBatches(async () => {
    const result = await sql`
      delete from passkey_challenges where challenge in (
        select challenge from passkey_challenges where expires_at <= ${now} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  const idempotencyAnswers = await inBatches(() => deleteExpiredAnswers(db, now, BATCH));
  // Sign-ins at an identity provider never finished (src/auth/identity-providers): their state, nonce and verifier.
  const oidcFlows = await inBatches(async () => {
    const result = await sql`
      delete from oidc_sign_in_flows where state_digest in (
        select state_digest from oidc_sign_in_flows where expires_at <= ${now} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  return { signInAttempts, signInChallenges, sessions, idempotencyAnswers, oidcFlows };
}

export interface MaintenanceResult extends SweepResult {
  auditEventsSealed: number;
  auditEventsDeleted: number;
  /** Audit events whose client address and user agent were past SIGN_IN_ADDRESS_RETENTION_DAYS, erased. */
  auditAddressesErased: number;
  /** Rate-limit counters of windows that are over, and key usage hours past their 90 days. */
  rateLimitCounters: number;
  apiKeyUsageHours: number;
  /** Events past EVENT_RETENTION_DAYS, with their deliveries (docs/EVENTS.md). */
  events: number;
  /** Finished webhook deliveries past WEBHOOK_DELIVERY_RETENTION_DAYS. */
  webhookDeliveries: number;
  /** Messages of the mail outbox past MESSAGE_RETENTION_DAYS. */
  messages: number;
  /** Messages carrying a recovery link that expired or was spent: no token outlives its use in the outbox (docs/MAIL.md). */
  deadLinkMessages: number;
}

/** The periodic step: sweep, then seal the audit events waiting, then delete those past their retention. */
export async function maintain(db: Kysely<Database>, now: Date, policy: SweepPolicy, auditRetentionS: number, retention: RetentionPolicy = DEFAULT_RETENTION): Promise<MaintenanceResult> {
  const swept = await sweep(db, now, policy);
  const sealed = await sealAuditEvents(db, now);
  const auditEventsDeleted = await deleteExpiredAuditEvents(db, now, auditRetentionS);
  const auditAddressesErased = retention.signInAddressRetentionS === undefined ? 0 : await eraseExpiredSignInAddresses(db, now, retention.signInAddressRetentionS);
  const rateLimitCounters = await deleteEndedCounters(db, now);
  const apiKeyUsageHours = await deleteOldUsage(db, now);
  const events = await inBatches(() => deleteExpiredEvents(db, now, BATCH, retention.eventRetentionS));
  const deliveriesBefore = new Date(now.getTime() - retention.deliveryRetentionS * 1000);
  const webhookDeliveries = await inBatches(async () => {
    const result = await sql`
      delete from webhook_deliveries where id in (
        select id from webhook_deliveries where status <> 'pending' and created_at <= ${deliveriesBefore} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  const messagesBefore = new Date(now.getTime() - retention.messageRetentionS * 1000);
  const messages = await inBatches(async () => {
    const result = await sql`
      delete from messages where id in (
        select id from messages where created_at <= ${messagesBefore} limit ${BATCH} for update skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  const deadLinkMessages = await inBatches(async () => {
    const result = await sql`
      delete from messages where id in (
        select m.id from messages m join password_resets r on r.id = m.password_reset_id
        where r.spent_at is not null or r.expires_at <= ${now}
        limit ${BATCH} for update of m skip locked)`.execute(db);
    return Number(result.numAffectedRows ?? 0);
  });
  return { ...swept, auditEventsSealed: sealed.events, auditEventsDeleted, auditAddressesErased, rateLimitCounters, apiKeyUsageHours, events, webhookDeliveries, messages, deadLinkMessages };
}

/** Runs maintain() every `intervalS` seconds (never two runs of this process at once) until stopped. */
export function startSweeper(
  deps: { db: Kysely<Database>; clock: Clock; logger: Logger },
  settings: { policy: SweepPolicy; auditRetentionS: number; retention?: RetentionPolicy },
  intervalS: number,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () => {
    running ??= maintain(deps.db, deps.clock.now(), settings.policy, settings.auditRetentionS, settings.retention)
      .then((result) => {
        if (Object.values(result).some((n) => n > 0)) deps.logger.info({ deleted: result }, 'swept expired rows');
      })
      // A database outage is reported by the requests; the next run catches up.
      .catch((err: unknown) => deps.logger.warn({ err: { message: (err as Error).message } }, 'maintenance failed'))
      .finally(() => (running = undefined));
  };
  const timer = setInterval(run, intervalS * 1000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
