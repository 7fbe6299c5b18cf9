// How a benchmark that starts servers against a database of its own runs: the servers it started
// are stopped, then the database, however it ends; a failure is printed and exits 1.
import type { ChildProcess } from 'node:child_process';
import type { BenchDatabase } from './database.js';
import { stopProcess } from './process.js';

/** Opens the database, runs `body` with it and a list to put every started server in, and cleans up. */
export function runBenchmark(open: () => Promise<BenchDatabase>, body: (database: BenchDatabase, servers: ChildProcess[]) => Promise<void>): void {
  const run = async () => {
    const database = await open();
    const servers: ChildProcess[] = [];
    try {
      await body(database, servers);
    } finally {
      await Promise.all(servers.map(stopProcess));
      await database.stop();
    }
  };
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
