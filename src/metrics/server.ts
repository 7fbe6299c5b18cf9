// The metrics listener: GET /metrics in the Prometheus text format, on an address and port of its
// own (METRICS_HOST, METRICS_PORT; loopback by default), so the service's public listener never
// serves it and a proxy in front cannot expose it by accident. Nothing else is served here.
import http from 'node:http';
import { once } from 'node:events';
/** What is served: one registry's metrics, or those of every worker summed (src/cluster.ts). */
export interface MetricsSource {
  readonly contentType: string;
  metrics(): Promise<string>;
}
import type { Logger } from 'pino';

export async function startMetricsServer(registry: MetricsSource, host: string, port: number, logger: Logger): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: metrics are at GET /metrics.\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'Content-Type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (err: unknown) => {
        logger.error({ err: { message: (err as Error).message } }, 'metrics could not be collected');
        res.writeHead(500, { 'Content-Type': 'text/plain' }).end('Metrics could not be collected.\n');
      },
    );
  });
  server.listen(port, host);
  await once(server, 'listening');
  return server;
}
