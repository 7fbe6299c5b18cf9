// When a credential's last use is worth writing down. An API key's and a session's last use are
// written at most once a minute (a conditional UPDATE, so several processes write once). But every
// request that read the credential before that UPDATE committed sees it stale too: under load,
// dozens of requests in flight on one key or session each sent the UPDATE, each holding a pooled
// connection while it waited for the row's lock, and the requests behind them waited for a
// connection (test/touch-burst.test.ts). This process asks once per interval per credential.
// It is bookkeeping only: no right depends on it.

/** Credentials remembered at most; past it, ones noted longer ago than the interval are forgotten. */
const MAX_REMEMBERED = 10_000;

/** `(id, nowMs) => true` the first time per `intervalMs` for that id, in this process. */
export function useNotes(intervalMs: number): (id: string, nowMs: number) => boolean {
  const notedAt = new Map<string, number>();
  return (id, nowMs) => {
    const last = notedAt.get(id);
    if (last !== undefined && nowMs - last < intervalMs) return false;
    if (notedAt.size >= MAX_REMEMBERED) for (const [other, at] of notedAt) if (nowMs - at >= intervalMs) notedAt.delete(other);
    notedAt.set(id, nowMs);
    return true;
  };
}
