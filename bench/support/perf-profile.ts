// CPU profile from Linux perf (Debian package `linux-perf`), for bench/profile.ts: samples are
// taken on CPU time of every thread of the process (software event cpu-clock, which a VM without
// hardware counters has too), so a thread waiting or pre-empted by a neighbour is not counted, as
// it is by V8's own profiler, which samples the main thread on wall-clock time. The process runs
// with --perf-basic-prof, so perf can name JavaScript functions (and their files) too.
import { execFile, execFileSync, spawn } from 'node:child_process';
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

/** Records `pid` while `during` runs; the samples as `perf script` prints them. */
export async function recordPerf(pid: number, file: string, during: () => Promise<unknown>): Promise<string> {
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(FREQUENCY), '-g', '-p', String(pid), '-o', file], { stdio: 'ignore' });
  await new Promise((resolve) => setTimeout(resolve, 300)); // attached
  await during();
  perf.kill('SIGINT');
  await new Promise((resolve) => perf.once('exit', resolve));
  const { stdout } = await promisify(execFile)('perf', ['script', '-i', file], { maxBuffer: 1 << 30 });
  return stdout;
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
const COMPILER = /Compile|Turbofan|Maglev|Sparkplug|Baseline|OptimizingCompile/;

/**
 * Milliseconds of CPU per place: a sample counts for the innermost JavaScript function on its
 * stack (what V8's built-ins and the kernel did, they did for it), garbage collection and the JIT
 * compiler apart, on whatever thread they ran; the rest (libuv, the kernel outside JavaScript) apart.
 */
export function cpuByPlace(script: string): Map<string, number> {
  const totals = new Map<string, number>();
  for (const sample of script.split('\n\n')) {
    const lines = sample.trim().split('\n');
    if (lines.length < 2) continue;
    const frames = lines.slice(1).map((l) => l.trim().replace(/^[0-9a-f]+ /, ''));
    const stack = frames.slice(0, 12).join(' | ');
    let place: string;
    if (GC.test(stack)) place = '(garbage collection)';
    else {
      const js = frames.find((f) => f.startsWith('JS:') || /^(LazyCompile|Function|Builtin):/.test(f));
      if (js) place = placeOf(js);
      else if (COMPILER.test(stack)) place = '(JIT compiler)';
      else place = '(native: libuv, kernel, V8)';
    }
    totals.set(place, (totals.get(place) ?? 0) + 1000 / FREQUENCY);
  }
  return totals;
}
