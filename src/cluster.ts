// WORKERS > 1: N processes of the service on one host, through Node's cluster module. This
// process (the primary) serves no request: it starts the workers, each a complete service
// (src/main.ts) sharing the listening port, with connections handed out in turn; starts a new one
// when one dies; serves the metrics of all of them, summed, on the metrics listener; and on SIGTERM
// has each drain (the drain of src/http/server.ts) and exits when the last has stopped. The
// workers share nothing but PostgreSQL, like processes behind a load balancer
// (docs/DEPLOYMENT.md, "Several processes on one host").
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from './config.js';
import { startMetricsServer } from './metrics/server.js';

/** How long the primary waits before replacing a worker that died, so a crash at start-up does not spin. */
const RESTART_DELAY_MS = 1000;

export async function runPrimary(config: Config, logger: Logger): Promise<void> {
  // Each scrape asks every worker for its registry over IPC and sums the series (prom-client).
  const aggregator = new AggregatorRegistry();
  const metricsServer = config.metrics
    ? await startMetricsServer({ contentType: aggregator.contentType, metrics: () => aggregator.clusterMetrics() }, config.metrics.host, config.metrics.port, logger)
    : undefined;
  if (config.metrics) logger.info({ metrics: config.metrics }, `metrics of every worker on http://${config.metrics.host}:${config.metrics.port}/metrics`);

  let stopping = false;
  let failedExits = 0;
  const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
  const fork = () => {
    if (!stopping) cluster.fork();
  };
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (code !== 0) failedExits += 1;
      if (live().length === 0) {
        metricsServer?.close();
        logger.info({ failedExits }, 'stopped');
        process.exit(failedExits === 0 ? 0 : 1);
      }
      return;
    }
    logger.error({ workerPid: worker.process.pid, code, signal }, `worker exited; another starts in ${RESTART_DELAY_MS} ms`);
    setTimeout(fork, RESTART_DELAY_MS);
  });
  for (let i = 0; i < config.workers; i++) fork();
  logger.info({ workers: config.workers }, `started ${config.workers} workers`);

  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, workers: live().length }, 'shutting down: every worker drains, then exits');
    // A worker that got the signal from the process group too just ignores the second one.
    for (const worker of live()) worker.process.kill('SIGTERM');
    if (live().length === 0) process.exit(0);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** In a worker: the registry the primary's scrapes read (instead of a metrics listener of its own). */
export function offerMetricsToPrimary(registry: Registry): void {
  // Making one is what installs the worker's answer to the primary's requests (prom-client).
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
}

export const isWorker = () => cluster.isWorker;
