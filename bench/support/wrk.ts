// The load generator of the HTTP benchmarks: wrk (Debian package `wrk`), a C program in its own
// process, so the client's work is neither done on a server's event loop nor in Node.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

export interface WrkResult {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  mean: number;
  /** Answers outside 2xx/3xx plus socket errors and timeouts. */
  failures: number;
  /** How long wrk ran, in seconds: its requests over its Requests/sec (both exact, where its "in 5.00s" is rounded to 10 ms). */
  seconds: number;
  /**
   * The latency distribution at fine steps, [percent, ms] from 0 (the fastest) to 100 (the
   * slowest), from bench/latencies.lua: a run without a script of its own has it, so that several
   * runs' latencies can be merged (measure.ts, mergeSlices). Absent for a run with a script.
   */
  latencies?: [number, number][];
}

const run = promisify(execFile);

/** Prints a run's latency distribution at fine steps (bench/latencies.lua), for runs without a script of their own. */
const LATENCIES_SCRIPT = fileURLToPath(new URL('../latencies.lua', import.meta.url));

/** Milliseconds from wrk's "812.00us", "9.12ms", "1.20s". */
function ms(text: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(text.trim());
  if (!m) throw new Error(`wrk: cannot read the duration "${text}"`);
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
  return Number(m[1]) * factor;
}

/**
 * Runs `wrk` for `seconds` with `connections` keep-alive connections. Optional `script` is a Lua
 * file (e.g. for POST bodies). Throws when wrk is missing: `apt-get install -y wrk`.
 */
export async function wrk(url: string, options: { connections: number; seconds: number; headers?: Record<string, string>; threads?: number; script?: string }): Promise<WrkResult> {
  const args = ['--latency', '-t', String(options.threads ?? Math.min(2, options.connections)), '-c', String(options.connections), '-d', `${options.seconds}s`, '--timeout', '10s'];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  args.push('-s', options.script ?? LATENCIES_SCRIPT);
  args.push(url);
  const { stdout } = await run('wrk', args);
  const field = (re: RegExp) => re.exec(stdout)?.[1];
  const errors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
  const rps = Number(field(/Requests\/sec:\s+([\d.]+)/));
  const requests = Number(field(/(\d+) requests in/));
  return {
    rps,
    requests,
    seconds: rps > 0 ? requests / rps : options.seconds,
    p50: ms(field(/ 50%\s+(\S+)/) ?? ''),
    p99: ms(field(/ 99%\s+(\S+)/) ?? ''),
    mean: ms(field(/Latency\s+(\S+)/) ?? ''),
    ...(options.script ? {} : { latencies: [...stdout.matchAll(/^latency ([\d.]+) (\d+)$/gm)].map((m): [number, number] => [Number(m[1]), Number(m[2]) / 1000]) }),
    failures: Number(field(/Non-2xx or 3xx responses: (\d+)/) ?? 0) + (errors ? errors.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
  };
}
