// Servers under benchmark run in processes of their own, as in production: the service is the
// compiled `dist/src/main.js` that `make run` starts (`make bench` builds it first), other
// scripts run through tsx; plus BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), on a
// free loopback port, stdout (the access log) to /dev/null.
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const address = s.address();
      s.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/**
 * The service as production runs it: compiled JavaScript, no TypeScript loader. BENCH_SERVICE_SCRIPT
 * runs another build instead (e.g. the previous commit's, built in a copy of the tree, to compare).
 */
export const SERVICE_SCRIPT = process.env.BENCH_SERVICE_SCRIPT ?? 'dist/src/main.js';

/** A sealing key for the run (the service refuses to start on PostgreSQL without one). */
export const BENCH_SEALING_KEYS = `bench:${randomBytes(32).toString('base64')}`;
/** The service's settings in the HTTP benchmarks: production mode, response validation off, the access log on (to /dev/null), a pool of 10 (the floor's). */
// MAIL_OUTBOX_ONLY: production needs SMTP_URL or this; the benchmarks measure no mail (bench/mail-send.ts sends its own).
export const SERVICE_ENV = { NODE_ENV: 'production', VALIDATE_RESPONSES: 'false', LOG_LEVEL: 'info', DB_POOL_MAX: '10', SEALING_KEYS: BENCH_SEALING_KEYS, MAIL_OUTBOX_ONLY: 'true' };

/** BENCH_VARIANT_ENV ("NAME=value NAME=value", or comma-separated): the settings a benchmark's variant process runs with, beside SERVICE_ENV. */
export const VARIANT_ENV = Object.fromEntries(
  (process.env.BENCH_VARIANT_ENV ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
) as Record<string, string>;

/**
 * The Node flags of `npm start` (package.json's start script: how production runs the service, a
 * 32 MB young generation, docs/DEPLOYMENT.md). Every server a benchmark starts runs with them, the
 * floors too: the floor is what any service must spend on the same stack, run the same way.
 */
export const START_NODE_FLAGS: string[] = (() => {
  const { scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };
  const [command, ...words] = scripts.start.split(/\s+/);
  const script = words.pop();
  // Flags written `--name=value`, the script last: anything else is not what this reads.
  if (command !== 'node' || script !== 'dist/src/main.js' || !words.every((word) => /^--[\w-]+(=\S+)?$/.test(word))) {
    throw new Error(`package.json's start script is not "node --flag=value ... dist/src/main.js": ${scripts.start}`);
  }
  return words;
})();

export async function startProcess(script: string, env: Record<string, string>, extraNodeArgs: string[] = []): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const nodeArgs = [...START_NODE_FLAGS, ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []), ...extraNodeArgs];
  if (!existsSync(script)) throw new Error(`${script} is missing: run \`make build\` first (make bench does).`);
  const loader = script.endsWith('.js') ? [] : ['--import', 'tsx'];
  // The service's metrics listener on (as in production), on a free port of its own: several services run at once.
  const metricsPort = String(await freePort());
  const child = spawn(process.execPath, [...nodeArgs, ...loader, script], { env: { ...process.env, METRICS_PORT: metricsPort, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    try {
      if ((await fetch(`${url}/livez`)).status < 500) return { url, child };
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  child.kill();
  throw new Error(`${script} did not start`);
}

/** SIGTERM, then waits for the exit (the service drains; a --cpu-prof profile is written on exit). */
export function stopProcess(child: ChildProcess): Promise<unknown> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(null) : (child.once('exit', resolve), child.kill('SIGTERM'))));
}
