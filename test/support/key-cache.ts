// Processes keep API keys in memory and drop them when they hear a change's notification
// (docs/PARTNER-KEYS.md, "Keys in memory"): a change made through one process reaches another
// within the notification's flight, not necessarily before the test's next request. Tests across
// real processes ask until the answer changes (with a deadline, not a time budget), then that it
// stays changed. The exact promise, no admission after the change is heard, is proved in
// test/api-key-cache.test.ts, where the test sees what each process has heard.

/**
 * How long a process may take to hear a change before a test calls it a failure. Normally a few
 * milliseconds; on a busy two-core machine (every core shared with other test files and their
 * processes) a notification can wait seconds behind the listener's event loop. A deadline, not a
 * budget: a poll returns as soon as the answer changes.
 */
export const HEARD_DEADLINE_MS = 30_000;

/** The timeout of a test that waits on `polls` such deadlines, besides its own work (test/support/budgets.ts's 30 s). */
export const heardBudget = (polls: number) => 30_000 + polls * HEARD_DEADLINE_MS;

/** Asks until `send` answers `status` (up to `deadlineMs`), then three more times: the answer that stays. */
export async function answersOnceHeard<R extends { status: number }>(send: () => Promise<R>, status: number, deadlineMs = HEARD_DEADLINE_MS): Promise<R> {
  const deadline = Date.now() + deadlineMs;
  let res = await send();
  while (res.status !== status) {
    if (Date.now() > deadline) throw new Error(`still ${res.status}, not ${status}, after ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
    res = await send();
  }
  for (let i = 0; i < 3; i++) {
    const again = await send();
    if (again.status !== status) throw new Error(`answered ${status}, then ${again.status}`);
  }
  return res;
}
