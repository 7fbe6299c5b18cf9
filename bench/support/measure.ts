// One measurement of an HTTP benchmark (wrk against a server in its own process, with the CPU its
// process and PostgreSQL's used meanwhile, per request), the medians of rounds of them, and the
// tables they are reported in.
import { wrk, type WrkResult } from './wrk.js';
import { countCpu, childPids } from './cpu.js';

export interface Measurement extends WrkResult {
  label: string;
  /** CPU milliseconds per answered request: the server's Node process (every thread), PostgreSQL's processes. */
  nodeMs: number;
  postgresMs: number;
  /** Share of the machine's CPU time the host stole meanwhile, and how busy the machine was (0..1). */
  steal: number;
  busy: number;
  load: number;
}

export interface Target {
  /** The server's process (with its child processes: WORKERS). */
  pid: number;
  /** PostgreSQL's postmaster (its children are counted), when it runs on this machine. */
  postmaster: number | undefined;
}

export async function measure(
  label: string,
  url: string,
  target: Target,
  options: { connections: number; seconds: number; headers?: Record<string, string>; script?: string },
): Promise<Measurement> {
  // The server's process and its children: the workers, when it is a cluster's primary (WORKERS).
  const stop = countCpu({ node: () => [target.pid, ...childPids(target.pid)], postgres: () => (target.postmaster ? childPids(target.postmaster) : []) });
  const r = await wrk(url, options);
  const cpu = stop();
  const answered = Math.max(1, r.requests);
  return {
    label,
    ...r,
    nodeMs: (cpu.groups.node! * 1000) / answered,
    postgresMs: (cpu.groups.postgres! * 1000) / answered,
    steal: cpu.machineSteal / cpu.machineCapacity,
    busy: cpu.machineBusy / cpu.machineCapacity,
    load: cpu.loadAverage,
  };
}

export const print = (line = '') => process.stdout.write(`${line}\n`);

export function describe(m: Measurement): string {
  return (
    `  ${m.label.padEnd(30)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(1).padStart(5)} ms  p99 ${m.p99.toFixed(1).padStart(6)} ms  ` +
    `CPU/req: Node ${m.nodeMs.toFixed(2)} ms, PostgreSQL ${m.postgresMs.toFixed(2)} ms  ` +
    `failures ${m.failures}  (machine ${(m.busy * 100).toFixed(0)} % busy, ${(m.steal * 100).toFixed(0)} % stolen, load ${m.load.toFixed(1)})`
  );
}

export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

export const percent = (ratio: number) => `${(ratio * 100).toFixed(1)} %`;
export const range = (values: number[], format: (v: number) => string) =>
  `${format(median(values))} [${format(Math.min(...values))}–${format(Math.max(...values))}]`;

/** The medians over rounds of each measurement of a label. */
export function medianOf(measurements: Measurement[]) {
  return {
    rps: median(measurements.map((m) => m.rps)),
    p50: median(measurements.map((m) => m.p50)),
    p99: median(measurements.map((m) => m.p99)),
    nodeMs: median(measurements.map((m) => m.nodeMs)),
    postgresMs: median(measurements.map((m) => m.postgresMs)),
    failures: measurements.reduce((sum, m) => sum + m.failures, 0),
  };
}

export function markdownTable(header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
