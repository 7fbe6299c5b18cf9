// CPU profile from Linux perf (Debian package `linux-perf`), for bench/profile.ts: samples are
// taken on CPU time of every thread of the process (software event cpu-clock, which a VM without
// hardware counters has too), so a thread waiting or pre-empted by a neighbour is not counted, as
// it is by V8's own profiler, which samples the main thread on wall-clock time. The process runs
// with --perf-basic-prof, so perf can name JavaScript functions (and their files) too.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

export const PERF_NODE_ARGS = ['--perf-basic-prof'];
const FREQUENCY = 1999; // samples per second of CPU time

export function perfWorks(): boolean {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * V8 appends a line to /tmp/perf-<pid>.map for every function it compiles, and never removes one:
 * code collected since (the contract validator built at start-up and thrown away, for one) leaves
 * lines whose addresses newer code now occupies, and perf names a sample after the first line it
 * finds. Keeps, for every address, the newest line only.
 */
function keepNewestSymbols(mapFile: string): void {
  if (!existsSync(mapFile)) return;
  const kept: { start: number; end: number; line: string }[] = []; // sorted by start, no overlaps
  for (const line of readFileSync(mapFile, 'utf8').split('\n')) {
    const [start, size] = line.split(' ', 2);
    if (!start || !size) continue;
    const entry = { start: parseInt(start, 16), end: parseInt(start, 16) + parseInt(size, 16), line }; // addresses < 2^48: exact
    // The first kept entry that ends after this one starts: the first that may overlap it.
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (kept[mid]!.end > entry.start) high = mid;
      else low = mid + 1;
    }
    let overlapping = 0;
    while (low + overlapping < kept.length && kept[low + overlapping]!.start < entry.end) overlapping++;
    kept.splice(low, overlapping, entry);
  }
  writeFileSync(mapFile, `${kept.map((k) => k.line).join('\n')}\n`);
}

/** Records `pid` while `during` runs; the samples as `perf script` prints them. */
export async function recordPerf(pid: number, file: string, during: () => Promise<unknown>): Promise<string> {
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(FREQUENCY), '-g', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 300)); // attached
  await during();
  perf.kill('SIGINT');
  await new Promise((resolve) => perf.once('exit', resolve));
  keepNewestSymbols(`/tmp/perf-${pid}.map`);
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', file], { maxBuffer: 1 << 30 });
  return stdout;
}

/** The symbol file V8 wrote for a process that has exited. */
export function removeSymbols(pid: number): void {
  rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

/** Where a JavaScript frame's function lives: a package, a folder of src/, a file of bench/, Node's own code. */
function placeOf(frame: string): string {
  const modules = /node_modules\/((?:@[^/]+\/)?[^/ :]+)/.exec(frame);
  if (modules) return modules[1]!;
  const own = /\/(src\/[^/ :]+|bench\/[^/ :]+)/.exec(frame);
  if (own) return own[1]!.replace(/\.js$/, '.ts');
  const node = / (node:[^: ]+)/.exec(frame);
  if (node) return node[1]!.replace(/^node:internal\/(streams\/)?/, 'node:');
  // Functions compiled from generated source have no file: Ajv's validators (`validate12`).
  if (/^JS:\S*validate\d+ /.test(frame)) return 'ajv (generated validators)';
  return 'JavaScript (other)';
}

const GC = /Scavenge|MarkCompact|Sweeper|ConcurrentMarking|MinorMark|Evacuat|Heap::CollectGarbage|IncrementalMarking/;
const ARGON2 = /argon2/i;
const COMPILER = /Compile|Turbofan|Maglev|Sparkplug|Baseline|OptimizingCompile/;

/**
 * Milliseconds of CPU per place: a sample counts for the innermost JavaScript function on its
 * stack (what V8's built-ins and the kernel did, they did for it), garbage collection and the JIT
 * compiler apart, on whatever thread they ran; the rest (libuv, the kernel outside JavaScript) apart.
 */
export function cpuByPlace(script: string, by: (place: string, frame: string) => string = (place) => place): Map<string, number> {
  const totals = new Map<string, number>();
  for (const sample of script.split('\n\n')) {
    const lines = sample.trim().split('\n');
    if (lines.length < 2) continue;
    const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, ''));
    const stack = frames.slice(0, 12).join(' | ');
    let key: string;
    // Password hashing's native code (and the kernel's page faults for its 19 MiB) in the hashing
    // threads: what raw argon2id costs too, counted apart from what the service adds around it.
    if (frames.some((f) => ARGON2.test(f))) key = '(argon2 native: hashing, its memory)';
    else if (GC.test(stack)) key = '(garbage collection)';
    else {
      const js = frames.find((f) => f.startsWith('JS:'));
      if (js) key = by(placeOf(js), js);
      else if (COMPILER.test(stack)) key = '(JIT compiler)';
      else key = '(native: libuv, kernel, V8)';
    }
    totals.set(key, (totals.get(key) ?? 0) + 1000 / FREQUENCY);
  }
  return totals;
}

/** The same, with the functions of one place apart (`name file:line`). */
export const cpuByFunctionIn = (script: string, place: string) =>
  cpuByPlace(script, (where, frame) => (where === place ? frame.replace(/^JS:[*^~]?/, '').replace(/\+0x[0-9a-f]+/, '').replace(/ \(.*\)$/, '').replace(/ .*\/(src|bench|node_modules)\//, ' $1/') : where));
