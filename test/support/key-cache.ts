// Processes keep API keys in memory and drop them when they hear a change's notification
// (docs/PARTNER-KEYS.md, "Keys in memory"): a change made through one process reaches another
// within the notification's flight, not necessarily before the test's next request. Tests across
// real processes ask until the answer changes (with a deadline, not a time budget), then that it
// stays changed. The exact promise, no admission after the change is heard, is proved in
// test/api-key-cache.test.ts, where the test sees what each process has heard.

/** Asks until `send` answers `status` (up to `deadlineMs`), then three more times: the answer that stays. */
export async function answersOnceHeard<R extends { status: number }>(send: () => Promise<R>, status: number, deadlineMs = 10_000): Promise<R> {
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
