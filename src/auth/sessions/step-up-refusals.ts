// Refused step-up answers (a passkey's, a code's), counted per session on a key of their own
// (docs/AUTH.md, "Step-up"; table step_up_refusals, migration 20261231T1000). Not the sign-in
// throttle: its per-address count is shared with everyone behind the office's NAT address, so a
// stranger with no account could fill it and block every step-up there, and a stolen session's
// refusals would block the office's sign-ins. Per session, as the step-up challenges are
// (src/auth/second-factors/passkeys.ts): a thief holding a stolen token blocks only that session. A
// wrong authenticator-app code also counts against the person's daily cap (src/auth/second-factors).
import { sql, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { recordSecurityEvent } from './security-events.js';
import { rateLimited } from '../../errors.js';
import { truncateUserAgent, type ClientInfo } from './revocation.js';

/** Refused step-up answers one session may give in STEP_UP_REFUSAL_WINDOW_S before it gets 429. The number's one home. */
export const STEP_UP_REFUSALS_PER_SESSION = 10;
/** The sliding window of that count (seconds): 15 minutes, as the sign-in throttle's. */
export const STEP_UP_REFUSAL_WINDOW_S = 15 * 60;

export type RefusalGate =
  | { locked: false }
  /** `first`: the first refusal of this lock window, the one the journal records (marked, so no other is). */
  | { locked: true; retryAfter: number; first: boolean };

/**
 * Asks, in the step-up's transaction, whether the session may answer: the count and the marking
 * happen under a transaction-scoped advisory lock on the session (class 3; the sign-in throttle
 * uses 1 and 2), so parallel answers of one session are counted one after the other. Taken before
 * any factor's row: a reset (factors, then sessions) never waits on it, so no deadlock.
 */
export async function stepUpRefusalGate(trx: Transaction<Database>, sessionId: string, now: Date): Promise<RefusalGate> {
  await sql`select pg_advisory_xact_lock(3, hashtext(${sessionId}))`.execute(trx);
  const since = new Date(now.getTime() - STEP_UP_REFUSAL_WINDOW_S * 1000);
  // The limit-th newest counted refusal in the window: while it is there, the session is locked,
  // until it leaves the window (no refusal is counted meanwhile, so the lock window is fixed).
  const oldest = await trx
    .selectFrom('step_up_refusals')
    .select('refused_at')
    .where('session_id', '=', sessionId)
    .where('throttled', '=', false)
    .where('refused_at', '>', since)
    .orderBy('refused_at', 'desc')
    .offset(STEP_UP_REFUSALS_PER_SESSION - 1)
    .limit(1)
    .executeTakeFirst();
  if (!oldest) return { locked: false };
  const unlocksAt = oldest.refused_at.getTime() + STEP_UP_REFUSAL_WINDOW_S * 1000;
  const retryAfter = Math.max(1, Math.ceil((unlocksAt - now.getTime()) / 1000));
  const marked = await trx
    .selectFrom('step_up_refusals')
    .select('id')
    .where('session_id', '=', sessionId)
    .where('throttled', '=', true)
    .where('refused_at', '>=', oldest.refused_at)
    .executeTakeFirst();
  if (!marked) await trx.insertInto('step_up_refusals').values({ session_id: sessionId, refused_at: now, throttled: true }).execute();
  return { locked: true, retryAfter, first: !marked };
}

/** Counts one refused answer of the session (after stepUpRefusalGate, in the same transaction). */
export async function countStepUpRefusal(trx: Transaction<Database>, sessionId: string, now: Date): Promise<void> {
  await trx.insertInto('step_up_refusals').values({ session_id: sessionId, refused_at: now }).execute();
}

/**
 * A step-up refused unchecked, its session past its budget: `sign_in_throttled` (limit
 * `step_up_session`) journalled for the first refusal of the lock window only, in `trx`.
 */
export async function journalThrottled(trx: Transaction<Database>, me: { userId: string; sessionId: string }, gate: { retryAfter: number; first: boolean }, now: Date, client: ClientInfo) {
  if (!gate.first) return;
  await recordSecurityEvent(trx, {
    type: 'sign_in_throttled',
    at: now,
    userId: me.userId,
    sessionId: me.sessionId,
    ip: client.ip,
    requestId: client.requestId,
    userAgent: truncateUserAgent(client.userAgent),
    details: { limit: 'step_up_session', retry_after: gate.retryAfter },
  });
}

export const tooManyRefusals = (retryAfter: number) =>
  rateLimited(`Too many refused step-ups on this session; try again in ${retryAfter} seconds.`, retryAfter);
