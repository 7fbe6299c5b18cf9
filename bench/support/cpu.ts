// CPU accounting from /proc (Linux): how much CPU each side of a benchmark used while it ran, and
// how busy the whole machine was, so a result on a shared machine can be read for what it is.
import { readFileSync, readdirSync } from 'node:fs';
import { loadavg } from 'node:os';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  } catch {
    return undefined; // the process is gone
  }
}

/** CPU seconds (user + system, every thread) used so far by the process. */
export function processCpuSeconds(pid: number): number {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND : 0;
}

/**
 * CPU seconds used so far by the process's main thread, to the nanosecond (/proc/<pid>/schedstat;
 * /proc/<pid>/stat counts 10 ms ticks): for a single-threaded process such as a PostgreSQL backend.
 */
export function threadCpuSeconds(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e9;
  } catch {
    return 0; // the process is gone
  }
}

/** The pids of the direct children of `pid` (e.g. the backends of a PostgreSQL postmaster). */
export function childPids(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((child) => Number(statFields(child)?.[1]) === pid);
}

/** The parent of a process: a backend's parent is its postmaster. */
export function parentPid(pid: number): number {
  return Number(statFields(pid)?.[1]);
}

/**
 * CPU seconds of this benchmark's own process and of the children it has waited for (wrk runs,
 * seeding commands): /proc/self/stat's utime, stime, cutime and cstime.
 */
function ownCpuSeconds(): number {
  const f = statFields(process.pid);
  return f ? (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / TICKS_PER_SECOND : 0;
}

/** Busy, stolen and total CPU seconds of the whole machine (all cores) since boot. */
function machineSeconds(): { busy: number; steal: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const n = values.map(Number);
  const idle = (n[3] ?? 0) + (n[4] ?? 0); // idle + iowait
  const total = n.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: (total - idle) / TICKS_PER_SECOND, steal: (n[7] ?? 0) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
}

export interface CpuUsage {
  /** CPU seconds per named group of processes. */
  groups: Record<string, number>;
  /** Busy CPU seconds of the whole machine, every process included (neighbours too). */
  machineBusy: number;
  /** CPU seconds the hypervisor gave to other machines while ours wanted them (steal; part of busy). */
  machineSteal: number;
  /** Wall-clock seconds times the number of cores. */
  machineCapacity: number;
  loadAverage: number;
  /**
   * CPU seconds of every process that is not the benchmark's: the machine's busy time less the
   * steal, the groups counted and this process with the load generators it ran (a neighbour).
   */
  neighbours: number;
}

/** Starts counting; the returned function stops and gives the CPU used by each group meanwhile. */
export function countCpu(groups: Record<string, () => number[]>): () => CpuUsage {
  const before = new Map<number, number>();
  for (const pids of Object.values(groups)) for (const pid of pids()) before.set(pid, processCpuSeconds(pid));
  const machineBefore = machineSeconds();
  const ownBefore = ownCpuSeconds();
  return () => {
    const machineAfter = machineSeconds();
    const own = ownCpuSeconds() - ownBefore;
    // A process started meanwhile counts from zero; one that ended meanwhile is not counted (rare: pools keep their connections).
    const used = (pids: number[]) => pids.reduce((sum, pid) => sum + processCpuSeconds(pid) - (before.get(pid) ?? 0), 0);
    const counted = Object.fromEntries(Object.entries(groups).map(([name, pids]) => [name, used(pids())]));
    return {
      groups: counted,
      machineBusy: machineAfter.busy - machineBefore.busy,
      machineSteal: machineAfter.steal - machineBefore.steal,
      machineCapacity: machineAfter.total - machineBefore.total,
      loadAverage: loadavg()[0]!,
      neighbours: Math.max(0, machineAfter.busy - machineBefore.busy - (machineAfter.steal - machineBefore.steal) - Object.values(counted).reduce((a, b) => a + b, 0) - own),
    };
  };
}
