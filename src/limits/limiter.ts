// Rate limits decided in process, reconciled across processes through PostgreSQL in batches.
//
// Windows are fixed: [k·S, (k+1)·S) seconds on the clock, as GitHub's and Stripe's are, so a
// client reads one reset time and every process agrees on the window without talking. For each
// limited caller (a subject) and window, a process keeps `synced` (the count every process had
// admitted at its last reconciliation) and `pending` (what it admitted since, not yet pushed).
//
// A request is admitted in memory while synced + pending < N and pending < C, where
// C = floor(UNSYNCED_FRACTION × N) is how many admissions a process may owe the others. Past C
// the request waits for a reconciliation that pushes it with the rest (one round trip for every
// subject at once, shared by every request waiting), and is admitted if the total is still
// within N. Reconciliations also run every RATE_LIMIT_SYNC_INTERVAL_MS in the background, so a key
// well under its limit never waits.
//
// The bound: a process's view misses at most the others' pending admissions, each at most C and
// at most what that process admitted since its last reconciliation (≤ its rate × the interval).
// With P processes a subject gets at most N + (P − 1) × min(C, rate × interval) per window;
// the default fraction 0.1 keeps two processes within 10 % (N = 50: at most 55). With C = 0
// (N < 10 by default) every admission is pushed before it is answered: exact, a round trip each.
// Refused requests consume nothing.
//
// At the end of a window: a request that waits is decided on the total that the
// reconciliation carrying it returns, even when that reconciliation starts after its window has
// ended (it waited behind a slow one). So a counter is never dropped while requests wait on it: a
// new window starts a new counter beside it, and the old one is pushed with its waiters and
// dropped once they are decided. The database keeps a window's row COUNTER_KEPT_MS after its end
// (the maintenance step), so that such a late push adds to the window's total rather than to a
// fresh row; a reconciliation that starts more than LATE_PUSH_MS after the window (a database that
// stalled for minutes) refuses its waiters instead: the next window has long begun.
import type { Clock } from '../clock.js';

export interface RateLimit {
  requests: number;
  perSeconds: number;
}

/** What the limiter decided, and what the RateLimit headers say (the same numbers). */
export interface Decision {
  allowed: boolean;
  limit: RateLimit;
  /** Requests left in this window, as this process knows it. */
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
}

/** One subject's window, as pushed to and read back from the shared store. */
export interface CounterDelta {
  subject: string;
  windowStart: Date;
  windowEnd: Date;
  delta: number;
}

/** The shared counters (PostgreSQL: src/limits/repository.ts): adds the deltas, answers every total. */
export interface CounterStore {
  reconcile(batch: CounterDelta[]): Promise<Map<string, number>>;
}

/** How long after its window ends a counter may still be pushed for the requests waiting on it. */
export const LATE_PUSH_MS = 60_000;
/** How long the database keeps a window's counter after the window ends (longer than LATE_PUSH_MS and a statement). */
export const COUNTER_KEPT_MS = 5 * LATE_PUSH_MS;

export const counterKey = (subject: string, windowStart: Date | number) => `${subject}@${typeof windowStart === 'number' ? windowStart : windowStart.getTime()}`;

interface Counter {
  subject: string;
  windowStart: number;
  windowEnd: number;
  limit: RateLimit;
  synced: number;
  pending: number;
  /** Requests waiting for a reconciliation to decide them. */
  waiting: number;
  /** Set when a reconciliation started too late to carry the waiters (LATE_PUSH_MS): they are refused. */
  tooLate: boolean;
}

export class RateLimiter {
  /** Each subject's counter of the current window. */
  private readonly counters = new Map<string, Counter>();
  /** Counters of windows that are over, kept while requests wait on them. */
  private readonly draining = new Set<Counter>();
  private inFlight: Promise<void> | null = null;
  private queued: Promise<void> | null = null;

  constructor(
    private readonly store: CounterStore,
    private readonly clock: Clock,
    private readonly unsyncedFraction: number,
  ) {}

  /** Admits one request of `subject` under `limit`: synchronous unless it must wait for a reconciliation. */
  admit(subject: string, limit: RateLimit): Decision | Promise<Decision> {
    const now = this.clock.now().getTime();
    const period = limit.perSeconds * 1000;
    const windowStart = now - (now % period);
    // Each window length counts apart: a subject whose limit changes length starts from nothing
    // in the window under way, which is why src/api-keys/service.ts (rateLimitTightens) takes
    // such a change for a loosening.
    const key = `${subject}/${limit.perSeconds}`;
    let counter = this.counters.get(key);
    if (counter === undefined || counter.windowStart !== windowStart) {
      if (counter !== undefined && counter.waiting > 0) this.draining.add(counter);
      counter = { subject: key, windowStart, windowEnd: windowStart + period, limit, synced: 0, pending: 0, waiting: 0, tooLate: false };
      this.counters.set(key, counter);
    }
    counter.limit = limit;
    if (counter.synced + counter.pending >= limit.requests) return decision(counter, false, now);
    if (counter.pending < Math.floor(this.unsyncedFraction * limit.requests)) {
      counter.pending++;
      return decision(counter, true, now);
    }
    return this.admitAfterReconciling(counter);
  }

  /**
   * Counts the request as pending, pushes it with the next reconciliation (which carries every
   * counter with waiters, its window over or not), admits it if the total it returns stays within
   * the limit.
   */
  private async admitAfterReconciling(counter: Counter): Promise<Decision> {
    counter.pending++;
    counter.waiting++;
    try {
      await this.reconcile();
    } finally {
      if (--counter.waiting === 0) this.draining.delete(counter);
    }
    const allowed = !counter.tooLate && counter.synced <= counter.limit.requests;
    // A refused request stays counted: the window is full whichever request was the last one in.
    return decision(counter, allowed, this.clock.now().getTime());
  }

  /**
   * Pushes every pending admission and reads back every total, in one round trip. Concurrent
   * callers share it; a caller arriving while one runs gets the next one, which includes theirs.
   */
  reconcile(): Promise<void> {
    if (this.inFlight === null) {
      this.inFlight = this.pushAndRead().finally(() => (this.inFlight = null));
      return this.inFlight;
    }
    this.queued ??= this.inFlight.then(
      () => this.startQueued(),
      () => this.startQueued(),
    );
    return this.queued;
  }

  private startQueued(): Promise<void> {
    this.queued = null;
    return this.reconcile();
  }

  private async pushAndRead(): Promise<void> {
    const now = this.clock.now().getTime();
    const batch: { counter: Counter; delta: number }[] = [];
    for (const counter of [...this.counters.values(), ...this.draining]) {
      if (counter.windowEnd <= now && counter.waiting === 0) {
        // Over and nobody waits on it: what it still owes the others is moot.
        if (this.counters.get(counter.subject) === counter) this.counters.delete(counter.subject);
        this.draining.delete(counter);
        continue;
      }
      if (counter.windowEnd + LATE_PUSH_MS <= now) {
        // Its row may be gone: a push now would start a fresh count. Its waiters are refused.
        counter.tooLate = true;
        continue;
      }
      batch.push({ counter, delta: counter.pending });
    }
    if (batch.length === 0) return;
    const totals = await this.store.reconcile(
      batch.map(({ counter, delta }) => ({ subject: counter.subject, windowStart: new Date(counter.windowStart), windowEnd: new Date(counter.windowEnd), delta })),
    );
    for (const { counter, delta } of batch) {
      counter.pending -= delta;
      const total = totals.get(counterKey(counter.subject, counter.windowStart));
      if (total !== undefined) counter.synced = Math.max(counter.synced + delta, total);
    }
  }
}

function decision(counter: Counter, allowed: boolean, now: number): Decision {
  return {
    allowed,
    limit: counter.limit,
    remaining: Math.max(0, counter.limit.requests - counter.synced - counter.pending),
    resetSeconds: Math.max(1, Math.ceil((counter.windowEnd - now) / 1000)),
  };
}
