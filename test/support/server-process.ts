// Real server processes for multi-process, shutdown and soak tests: `node --import tsx src/main.ts`,
// each on its own free port, with its output kept for assertions.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../src/paths.js';
import { BUDGET_MS } from './budgets.js';

/**
 * The ports this test process has handed out. Never handed out twice: `fetch` keeps connections to
 * an address open for reuse, and a connection to a process that had the port before (still
 * serving it while it shuts down) would carry a request meant for the new one to the old one,
 * answered from another database (a key "unknown", in a loaded run).
 */
const handedOut = new Set<number>();

export async function freePort(host = '127.0.0.1'): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.on('error', reject);
      server.listen(0, host, () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

export interface ServerProcess {
  port: number;
  /** The environment it was given, with A_FREE_PORT values replaced by the ports chosen. */
  env: Record<string, string | undefined>;
  url: string;
  child: ChildProcess;
  /** Everything the process printed so far (JSON log lines). */
  output(): string;
  /** Parsed log lines. */
  records(): Record<string, unknown>[];
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/** An environment value that startServerProcess replaces with a free port of its own choosing (read it back from `env`). */
export const A_FREE_PORT = '<a free port>';

/** The port a process was to listen on was taken between our look and its listen (another test, or an outgoing connection's ephemeral port). */
export class PortTaken extends Error {}

/**
 * `env` is added to this process's environment; a variable given as undefined is removed from it,
 * one given as A_FREE_PORT gets a free port. A port found free can be taken by someone else before
 * the process listens on it (the process takes seconds to start, and outgoing connections draw
 * from the same ports): then the process is started again on other ports, up to three times.
 */
export function startServerProcess(env: Record<string, string | undefined>, timeoutMs: number = BUDGET_MS.serverStart): Promise<ServerProcess> {
  return onAFreePort((port) => startOnce(port, env, timeoutMs));
}

/**
 * Starts a process on a port free when chosen (`startOn` throws PortTaken when its process could
 * not listen there: another process took the port first, a test's server or an outgoing
 * connection's local port, from the same range): then again on another, three times at most.
 */
export async function onAFreePort<T>(startOn: (port: number) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(await freePort());
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === 3) throw err;
    }
  }
}

async function startOnce(port: number, requested: Record<string, string | undefined>, timeoutMs: number): Promise<ServerProcess> {
  const env = { ...requested };
  for (const [name, value] of Object.entries(env)) if (value === A_FREE_PORT) env[name] = String(await freePort());
  // No metrics listener unless asked for: processes of parallel tests would all want port 9464.
  // Administrators without a second factor are let in, as in every test not about that policy, and
  // identity providers may be the tests' own on loopback over http (TEST_ENV in context.ts).
  const merged = { ...process.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'test', METRICS_PORT: '0', ADMIN_SECOND_FACTOR: 'optional', OIDC_ALLOW_INSECURE_ISSUERS: 'true', ...env };
  const child = spawn(process.execPath, ['--import', 'tsx', join(PROJECT_ROOT, 'src/main.ts')], {
    env: Object.fromEntries(Object.entries(merged).filter(([, value]) => value !== undefined)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const started = Date.now();
  // Up when /livez answers (which works whatever LOG_LEVEL says).
  const up = async () => {
    try {
      return (await fetch(`http://127.0.0.1:${port}/livez`)).ok;
    } catch {
      return false;
    }
  };
  // Answered by our child, not by another test's server that took the port first (then ours exits
  // with EADDRINUSE, and the test would talk to a process that stops when that other test ends).
  while (!(await up()) || !listensOn(child.pid!, port)) {
    if (child.exitCode !== null) {
      if (output.includes('EADDRINUSE')) throw new PortTaken(output);
      throw new Error(`server exited with ${child.exitCode}: ${output}`);
    }
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGKILL');
      throw new Error(`server did not start within ${timeoutMs} ms: ${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  // A server that fails before the test stops it leaves the test with refused connections only: say
  // why. (A signal or a clean exit is a test's own doing: several stop their server themselves.)
  let stopping = false;
  child.on('exit', (code) => {
    if (!stopping && code !== 0 && code !== null) console.error(`server process on port ${port} exited with ${code} before the test stopped it; its last output:\n${output.slice(-4000)}`);
  });
  return {
    port,
    env,
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    records: () =>
      output
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    exited,
    async stop() {
      stopping = true;
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * Whether `pid` holds the socket listening on `port` (Linux: the listening sockets of
 * /proc/net/tcp{,6} against the process's file descriptors). Where /proc has no such tables, assumed.
 */
export function listensOn(pid: number, port: number): boolean {
  const tables = ['/proc/net/tcp', '/proc/net/tcp6'].filter((table) => existsSync(table));
  if (tables.length === 0) return true;
  const localPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  const inodes = new Set<string>();
  for (const table of tables) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      if (state === '0A' && local?.endsWith(localPort) && inode) inodes.add(inode);
    }
  }
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return inodes.has(/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1] ?? '');
      } catch {
        return false; // closed since the directory was read
      }
    });
  } catch {
    return false; // the process is gone
  }
}
