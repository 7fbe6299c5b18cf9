// Delivering in a test, in the test's own process: the service's delivery worker run by hand.
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import type { DeliveryWorker } from '../../src/webhooks/worker.js';

/**
 * Runs the worker until every event committed before the call is fanned out and every delivery due
 * now is attempted, then waits until each attempt it claimed is recorded. One round may not be enough: the relay holds an event back
 * while an older transaction runs anywhere in the cluster (transaction ids are the cluster's, and
 * the other test files' databases share it), as it must not step over one that commits late.
 */
export async function deliverDue(worker: DeliveryWorker, db: Kysely<Database>): Promise<void> {
  const behind = async () =>
    (await sql<{ behind: boolean }>`select exists (select 1 from events e, event_relay r where (e.xid, e.seq) > (r.last_xid, r.last_seq)) as behind`.execute(db)).rows[0]!.behind;
  await worker.runOnce();
  while (await behind()) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await worker.runOnce();
  }
  // A round claims only as many as the worker has free places (WEBHOOKS_CONCURRENCY) while earlier
  // attempts are in flight: once they are recorded, what is due still is claimed, until a round
  // finds nothing due.
  do await worker.idle();
  while ((await worker.runOnce()) > 0);
}
