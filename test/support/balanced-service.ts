// Several identical server processes on one test database behind nginx on loopback: what the
// multi-process and secrets-scan tests run against. nginx connects from 127.0.0.1, so only that
// address is trusted to set X-Forwarded-For.
import { createTestDatabase, type TestDatabase } from './context.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { startNginx, type LoadBalancer } from './nginx.js';
import { HttpClient } from './http-client.js';

export interface BalancedService {
  database: TestDatabase;
  servers: ServerProcess[];
  nginx: LoadBalancer;
  /** Through the load balancer. */
  client: HttpClient;
  /** One client per process, to address a given process directly. */
  direct: HttpClient[];
  /** Stops everything; resolves to each process's exit code. */
  stop(): Promise<(number | null)[]>;
}

export async function startBalancedService(processes: number, env: Record<string, string> = {}): Promise<BalancedService> {
  const database = await createTestDatabase();
  const servers = await Promise.all(
    Array.from({ length: processes }, () => startServerProcess({ DATABASE_URL: database.url, TRUST_PROXY: '127.0.0.1', ...env })),
  );
  const nginx = await startNginx(servers.map((s) => s.port));
  const client = new HttpClient(nginx.url, 8);
  const direct = servers.map((s) => new HttpClient(s.url, 8));
  return {
    database,
    servers,
    nginx,
    client,
    direct,
    async stop() {
      client.close();
      for (const d of direct) d.close();
      await nginx.stop();
      const codes = await Promise.all(servers.map((s) => s.stop()));
      await database.destroy();
      return codes;
    },
  };
}
