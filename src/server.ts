// Entry point: read config, migrate, listen; on SIGTERM stop accepting, let in-flight requests
// finish (up to SHUTDOWN_GRACE_MS), close the pool and exit 0.
import { once } from 'node:events';
import { loadConfig, ConfigError } from './config.js';
import { createLogger } from './logger.js';
import { buildService } from './main.js';
import { createHttpServer } from './http/server.js';

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(config.logLevel);
  const { app, database, stopBackgroundWork } = await buildService(config, logger);
  const server = createHttpServer(app);
  server.listen(config.port, config.host);
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ port, database: database.kind }, `listening on http://localhost:${port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    server.drain();
    const forced = setTimeout(() => server.closeAllConnections(), config.shutdownGraceMs);
    forced.unref();
    server.close(async () => {
      clearTimeout(forced);
      await stopBackgroundWork();
      await database.close();
      logger.info('stopped');
      process.exit(0);
    });
    // Keep-alive connections with no request in flight are closed now, the busy ones when done.
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((err) => {
  console.error('backoffice-api failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
