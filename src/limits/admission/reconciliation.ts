// The background step of every server process: every RATE_LIMIT_SYNC_INTERVAL_MS, push this
// process's rate-limit admissions and key usage to PostgreSQL and read back everyone's counts
// (one batch for all keys). On stop, one last push, so nothing counted is lost at a deploy.
import type { Logger } from 'pino';
import type { Admission } from './admission.js';

export function startReconciliation(admission: Admission, intervalMs: number, logger: Logger): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const run = () =>
    (running ??= admission
      .reconcile()
      // An outage is reported by the requests; what was counted is kept for the next run.
      .catch((err: unknown) => logger.warn({ err: { message: (err as Error).message } }, 'rate-limit reconciliation failed'))
      .finally(() => (running = undefined)));
  const timer = intervalMs > 0 ? setInterval(run, intervalMs) : undefined;
  timer?.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
      await run();
    },
  };
}
