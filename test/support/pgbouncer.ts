// PgBouncer from Debian's packages (1.18) between the service and the test cluster: started by the
// test on loopback, in the pool mode asked for, with its configuration and log in a temporary
// folder. It refuses to run as root, so as root it switches to the `postgres` system user (-u), as
// the cluster runs.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { listensOn, onAFreePort, PortTaken } from './server-process.js';

const PGBOUNCER = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

export interface PgBouncer {
  /** The URL of `database` through PgBouncer. */
  url(database: string): string;
  log(): string;
  stop(): Promise<void>;
}

/** `serverConnections`: how many PostgreSQL connections PgBouncer shares among all its clients. */
export function startPgBouncer(postgresUrl: string, options: { mode: 'session' | 'transaction'; serverConnections: number }): Promise<PgBouncer> {
  if (!existsSync(PGBOUNCER)) throw new Error(`pgbouncer not found at ${PGBOUNCER}: run 'make system-deps'`);
  return onAFreePort((port) => startOn(port, postgresUrl, options));
}

async function startOn(port: number, postgresUrl: string, options: { mode: 'session' | 'transaction'; serverConnections: number }): Promise<PgBouncer> {
  const postgres = new URL(postgresUrl);
  const dir = mkdtempSync(join(tmpdir(), 'backoffice-pgbouncer-'));
  chmodSync(dir, 0o777);
  writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
  // node-postgres sends statement_timeout as a startup parameter, which PgBouncer refuses unless
  // told to ignore it (behind a pooler, set it on the role instead: docs/DEPLOYMENT.md).
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    `[databases]
* = host=${postgres.hostname} port=${postgres.port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = ${port}
unix_socket_dir =
auth_type = trust
auth_file = ${dir}/users.txt
pool_mode = ${options.mode}
default_pool_size = ${options.serverConnections}
max_client_conn = 200
ignore_startup_parameters = statement_timeout
logfile = ${dir}/pgbouncer.log
`,
  );
  const asRoot = process.getuid?.() === 0;
  const child = spawn(PGBOUNCER, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], { stdio: 'ignore' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const log = () => (existsSync(join(dir, 'pgbouncer.log')) ? readFileSync(join(dir, 'pgbouncer.log'), 'utf8') : '');
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  // Up when it answers and holds the port, not whatever took the port before it could listen
  // (then it gives up: "Address already in use").
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url(postgres.pathname.slice(1) || 'postgres') });
    let failure: unknown;
    try {
      await client.connect();
      await client.query('select 1');
    } catch (err) {
      failure = err;
    } finally {
      await client.end().catch(() => {});
    }
    if (failure === undefined && listensOn(child.pid!, port)) break;
    if (log().includes('Address already in use')) {
      if (child.exitCode === null) child.kill('SIGKILL');
      throw new PortTaken(log());
    }
    if (attempt >= 50 || child.exitCode !== null) throw new Error(`pgbouncer did not start: ${(failure as Error | undefined)?.message ?? 'another process answers on its port'}\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    log,
    async stop() {
      // SIGINT: PgBouncer's immediate shutdown.
      if (child.exitCode === null) child.kill('SIGINT');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
