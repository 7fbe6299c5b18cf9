// A throwaway PostgreSQL 15 cluster for the test run, from the machine's server binaries; or the
// server at DATABASE_URL when one is given. Each test file gets its own database, copied from a
// migrated template, so files run in parallel without seeing each other's rows.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, chmodSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onAFreePort, PortTaken } from './server-process.js';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface Cluster {
  /** URL of the maintenance database (`postgres`) of the cluster. */
  adminUrl: string;
  stop(): void;
  /** Stops the server (fast shutdown: connected clients are cut off), keeping its data and port. */
  halt(): void;
  /** Starts the halted server again, on the same port and data directory. */
  resume(): void;
}

/** initdb refuses to run as root: the cluster then belongs to the `postgres` system user. */
function asClusterOwner(command: string, args: string[]) {
  const isRoot = process.getuid?.() === 0;
  const [file, argv] = isRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  const result = spawnSync(file, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

export async function startCluster(): Promise<Cluster> {
  if (!existsSync(join(PG_BIN, 'initdb'))) {
    throw new Error(`No PostgreSQL server binaries in ${PG_BIN}: run 'make system-deps' or set DATABASE_URL`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'backoffice-pg-'));
  chmodSync(dir, 0o777);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:postgres', dir]);
  const dataDir = join(dir, 'data');
  asClusterOwner(join(PG_BIN, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  const optionsOn = (port: number) =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses='127.0.0.1'",
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      '-c max_connections=300',
    ].join(' ');
  const log = join(dir, 'server.log');
  const startOn = (port: number) => asClusterOwner(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-o', optionsOn(port), '-l', log, '-w', 'start']);
  const port = await onAFreePort(async (free) => {
    try {
      startOn(free);
      return free;
    } catch (err) {
      if (existsSync(log) && readFileSync(log, 'utf8').includes('Address already in use')) throw new PortTaken((err as Error).message);
      throw err;
    }
  });
  const start = () => startOn(port);
  return {
    adminUrl: `postgres://postgres@127.0.0.1:${port}/postgres`,
    halt() {
      asClusterOwner(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']);
    },
    resume: start,
    stop() {
      try {
        asClusterOwner(join(PG_BIN, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}
