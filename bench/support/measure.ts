// One measurement of an HTTP benchmark (wrk against a server in its own process, with the CPU its
// process and PostgreSQL's used meanwhile, per request), the medians of rounds of them, and the
// tables they are reported in.
import { cpus, loadavg } from 'node:os';
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
  /** Share of the machine's CPU time that processes other than the benchmark's used meanwhile (0..1). */
  neighbours: number;
}

export interface Target {
  /** The server's process (with its child processes: WORKERS). */
  pid: number;
  /** PostgreSQL's postmaster (its children are counted), when it runs on this machine. */
  postmaster: number | undefined;
}

/**
 * How long a measurement waits before it starts. When wrk stops, the server it measured still
 * answers the requests in flight (up to one per connection, tens of ms of its CPU and
 * PostgreSQL's), and PostgreSQL's share of that would be counted to the next measurement, which
 * would also start beside it. Measured in 1-s slices, a round has twenty or more such hand-overs.
 */
export const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 250);

export async function measure(
  label: string,
  url: string,
  target: Target,
  options: { connections: number; seconds: number; headers?: Record<string, string>; script?: string },
): Promise<Measurement> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
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
    neighbours: cpu.neighbours / cpu.machineCapacity,
  };
}

/**
 * Row `row` (0-based, taken modulo n) of a Williams design for n steps: the first row is 0, 1,
 * n-1, 2, n-2, ..., and row i adds i to each place, modulo n. The n rows form a Latin square (each
 * step takes every place once) in which every two steps stand side by side equally often: every
 * ordered pair once when n is even, every unordered pair twice when n is odd (E. J. Williams,
 * 1949, the crossover design that balances what comes just before each treatment).
 */
export function williamsOrder(n: number, row: number): number[] {
  const first = [0];
  for (let i = 1; first.length < n; i++) {
    first.push(i);
    if (first.length < n) first.push(n - i);
  }
  return first.map((place) => (place + row) % n);
}

/**
 * One round's measurements, in an order that moves from round to round: rounds 2i + 1 and 2i + 2
 * take row i of a Williams design (williamsOrder), forwards in odd rounds and backwards in even
 * ones. Over 2 × n rounds of n steps (give a multiple of 2 × n for a balanced run) each step takes
 * every place of the round twice, and each step runs right after each other step equally often
 * within a round (for an odd n, playing each row backwards too is what balances who follows whom).
 * In a fixed order the service would always be in the middle of the round while its floor takes
 * the edges (or the reverse), and whatever a place does to a measurement (the pause between
 * rounds) would fall on one side only; in an order that only turned, each step kept the same
 * neighbours, so whatever one step leaves behind (a server's garbage, its connections closing)
 * fell on the same others. The results come back in the order given.
 *
 * With `slices` > 1, each measurement of `seconds` is taken as that many slices of
 * seconds / slices each, every step's slice in turn, the round's order reversed at every slice,
 * and each step's slices merged into one (mergeSlices). A drift of the machine slower than a slice
 * then falls on every step alike, where in one block per step it falls on whichever ran at the
 * time: two identical servers read further apart in 5-s blocks than in alternating 1-s slices
 * (bench/floor-noise.ts, docs/BENCHMARKS.md).
 */
export async function measureInTurn<S extends Record<string, ((seconds: number) => Promise<Measurement>) | undefined>>(
  round: number,
  steps: S,
  { seconds, slices = 1 }: { seconds: number; slices?: number },
): Promise<{ [K in keyof S]: Measurement }> {
  const sliceSeconds = secondsPerSlice(seconds, slices);
  const keys = Object.keys(steps).filter((key) => steps[key] !== undefined);
  const order = williamsOrder(keys.length, Math.floor((round - 1) / 2)).map((place) => keys[place]!);
  const measured = new Map<string, Measurement[]>(keys.map((key) => [key, []]));
  for (let slice = 0; slice < slices; slice++) {
    for (const key of (round + slice) % 2 === 1 ? order : [...order].reverse()) measured.get(key)!.push(await steps[key]!(sliceSeconds));
  }
  return Object.fromEntries(keys.map((key) => [key, mergeSlices(measured.get(key)!)])) as { [K in keyof S]: Measurement };
}

/**
 * The hot paths' measurement (the week, GET /users, GET /tasks): BENCH_DURATION seconds (5) taken
 * as BENCH_SLICES alternating slices (5, so five of 1 s), checked when the benchmark starts, before
 * it seeds anything.
 */
export function slicedMeasurement(): { seconds: number; slices: number } {
  const seconds = Number(process.env.BENCH_DURATION ?? 5);
  const slices = Number(process.env.BENCH_SLICES ?? 5);
  secondsPerSlice(seconds, slices);
  return { seconds, slices };
}

/** The length of each of `slices` slices of `seconds`: whole seconds (wrk's -d), or an error, which a benchmark should meet before it seeds anything. */
export function secondsPerSlice(seconds: number, slices: number): number {
  const each = seconds / slices;
  if (!Number.isInteger(slices) || slices < 1 || !Number.isInteger(each)) throw new Error(`${seconds} s cannot be measured in ${slices} slices of whole seconds (wrk's -d): set BENCH_DURATION and BENCH_SLICES to fit`);
  return each;
}

/**
 * One measurement from several slices of the same step: their requests over their seconds, CPU
 * per request over all their requests, the machine's figures weighted by time, and the latencies
 * of every request together (mergedPercentile). One slice is returned as it is.
 */
export function mergeSlices(slices: Measurement[]): Measurement {
  if (slices.length === 1) return slices[0]!;
  const requests = slices.reduce((sum, m) => sum + m.requests, 0);
  const seconds = slices.reduce((sum, m) => sum + m.seconds, 0);
  const answered = Math.max(1, requests);
  const perRequest = (value: (m: Measurement) => number) => slices.reduce((sum, m) => sum + value(m) * Math.max(1, m.requests), 0) / answered;
  const perSecond = (value: (m: Measurement) => number) => slices.reduce((sum, m) => sum + value(m) * m.seconds, 0) / seconds;
  const parts = slices.map((m) => {
    if (!m.latencies) throw new Error(`${m.label}: a slice without its latency distribution (a run with a script of its own) cannot be merged`);
    return { requests: m.requests, latencies: m.latencies };
  });
  return {
    label: slices[0]!.label,
    rps: requests / seconds,
    requests,
    seconds,
    p50: mergedPercentile(parts, 50),
    p99: mergedPercentile(parts, 99),
    mean: perRequest((m) => m.mean),
    failures: slices.reduce((sum, m) => sum + m.failures, 0),
    nodeMs: perRequest((m) => m.nodeMs),
    postgresMs: perRequest((m) => m.postgresMs),
    steal: perSecond((m) => m.steal),
    busy: perSecond((m) => m.busy),
    load: perSecond((m) => m.load),
    neighbours: perSecond((m) => m.neighbours),
  };
}

/**
 * The `percent` percentile of the requests of several runs together, from each run's distribution
 * at fine steps ([percent, ms], 0 to 100: bench/latencies.lua) weighted by its requests: the
 * latency at which the share of all requests answered at or below it reaches `percent`, each
 * run's share read between its steps as a straight line. (wrk keeps every run's histogram to
 * itself; a percentile of the runs' percentiles would not be one of the requests.)
 */
export function mergedPercentile(all: { requests: number; latencies: [number, number][] }[], percent: number): number {
  // A run without requests has no latencies to add (wrk's figures for it are placeholders).
  const parts = all.filter((p) => p.requests > 0);
  if (parts.length === 0) throw new Error('no requests to take a percentile of');
  for (const { latencies } of parts) {
    if (latencies[0]?.[0] !== 0 || latencies.at(-1)?.[0] !== 100) throw new Error('a latency distribution must run from its 0 step to its 100 step (bench/latencies.lua)');
  }
  const total = parts.reduce((sum, p) => sum + p.requests, 0);
  const shareAtOrBelow = (ms: number) =>
    parts.reduce((sum, { requests, latencies }) => {
      const above = latencies.findIndex(([, value]) => value > ms);
      if (above === -1) return sum + requests;
      if (above === 0) return sum;
      const [p0, v0] = latencies[above - 1]!;
      const [p1, v1] = latencies[above]!;
      return sum + (requests * (p0 + ((p1 - p0) * (ms - v0)) / (v1 - v0))) / 100;
    }, 0) / total;
  let low = Math.min(...parts.map((p) => p.latencies[0]![1]));
  let high = Math.max(...parts.map((p) => p.latencies.at(-1)![1]));
  // The share only grows with the latency: halve the interval that holds the percentile.
  for (let i = 0; i < 60 && high - low > 1e-6; i++) {
    const middle = (low + high) / 2;
    if (shareAtOrBelow(middle) >= percent / 100) high = middle;
    else low = middle;
  }
  return high;
}

export const print = (line = '') => process.stdout.write(`${line}\n`);

export function describe(m: Measurement): string {
  return (
    `  ${m.label.padEnd(30)} ${m.rps.toFixed(0).padStart(6)} req/s  p50 ${m.p50.toFixed(1).padStart(5)} ms  p99 ${m.p99.toFixed(1).padStart(6)} ms  ` +
    `CPU/req: Node ${m.nodeMs.toFixed(2)} ms, PostgreSQL ${m.postgresMs.toFixed(2)} ms  ` +
    `failures ${m.failures}  (machine ${(m.busy * 100).toFixed(0)} % busy, neighbours ${(m.neighbours * 100).toFixed(0)} %, ${(m.steal * 100).toFixed(0)} % stolen, load ${m.load.toFixed(1)})`
  );
}

/** A describe() line read back: its label (1) and its p99 in ms (2). */
export const DESCRIBED_LINE = /^ {2}(.+?) +\d+ req\/s {2}p50 +[\d.]+ ms {2}p99 +([\d.]+) ms/;

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

/** The machine's load averages (1, 5, 15 minutes), now or as read earlier. */
export const loadAverages = (values = loadavg()) => values.map((l) => l.toFixed(2)).join(' ');

/**
 * The line a benchmark states its settings in: the machine (CPUs, their model, Node's version; the
 * load average now with `load: true`), then the benchmark's own (load generator, service settings).
 */
export function machineLine(own: string, options: { load?: boolean } = {}): string {
  return `machine: ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), node ${process.version}${options.load ? `, load average ${loadAverages()}` : ''}; ${own}`;
}

/** A row of printFloorTable: the medians of the rounds' measurement `key`; `database: false` for a server without one (no PostgreSQL CPU). */
export interface FloorTableRow<K> {
  label: string;
  key: K;
  ratio: string;
  database?: false;
}

/**
 * The table of a benchmark of the service against its floor, with the host's steal above it: per
 * row, the medians over the rounds (req/s with its range, p50, p99, Node's and PostgreSQL's CPU per
 * request) and a ratio. The floor's and the service's rows with an API key then a bearer token (the
 * service's ratio: of the floor, median [range] of the rounds' `ratios`; the floor's: `floorRatio`,
 * else –), plus the benchmark's own rows: `first`, and after the service's row with each credential.
 */
export function printFloorTable<R extends Record<FloorRoundKey, Measurement>>(
  title: string,
  rounds: R[],
  ratios: { key: number[]; bearer: number[] },
  own: { first?: FloorTableRow<keyof R>[]; afterKey?: FloorTableRow<keyof R>[]; afterBearer?: FloorTableRow<keyof R>[]; floorRatio?: { key: string; bearer: string } } = {},
): void {
  const ms = (v: number) => v.toFixed(2);
  const row = ({ label, key, ratio, database }: FloorTableRow<keyof R>) => {
    const measurements = rounds.map((r) => r[key] as Measurement);
    const m = medianOf(measurements);
    return [label, range(measurements.map((x) => x.rps), (v) => v.toFixed(0)), m.p50.toFixed(1), m.p99.toFixed(1), ms(m.nodeMs), database === false ? '–' : ms(m.postgresMs), ratio];
  };
  const ofTheFloor = (values: number[]) => `**${range(values, percent)} of the floor**`;
  const steal = median(rounds.flatMap((r) => Object.values(r).map((m: Measurement) => m.steal)));
  print(`\nmedians over ${rounds.length} rounds [range] (host steal: median ${percent(steal)} of the machine's CPU time):\n`);
  const rows: FloorTableRow<keyof R>[] = [
    ...(own.first ?? []),
    { label: FLOOR_ROUND_LABELS.floorKey, key: 'floorKey', ratio: own.floorRatio?.key ?? '–' },
    { label: `**${FLOOR_ROUND_LABELS.serviceKey}**`, key: 'serviceKey', ratio: ofTheFloor(ratios.key) },
    ...(own.afterKey ?? []),
    { label: FLOOR_ROUND_LABELS.floorBearer, key: 'floorBearer', ratio: own.floorRatio?.bearer ?? '–' },
    { label: `**${FLOOR_ROUND_LABELS.serviceBearer}**`, key: 'serviceBearer', ratio: ofTheFloor(ratios.bearer) },
    ...(own.afterBearer ?? []),
  ];
  print(markdownTable([title, 'req/s', 'p50 ms', 'p99 ms', 'Node CPU ms/req', 'PostgreSQL CPU ms/req', 'ratio'], rows.map(row)));
}

/**
 * Measure alone (docs/BENCHMARKS.md): a figure taken while something else runs on the machine's two cores
 * measures the neighbour. The benchmark's own processes (the servers, PostgreSQL, wrk, this one)
 * are expected to fill the cores; what counts is the CPU used by every other process, and the
 * host's steal. Above either bound, a benchmark prints "not quiet" instead of a verdict.
 * 5 % of the machine is a tenth of a core: an editor, a shell, the odd cron job.
 */
export const QUIET_NEIGHBOURS = Number(process.env.BENCH_QUIET_NEIGHBOURS ?? 0.05);
export const QUIET_STEAL = Number(process.env.BENCH_QUIET_STEAL ?? 0.05);

/** How quiet the machine is before a run: a few seconds of its CPU with the benchmark idle (every busy process is a neighbour). */
export async function quietBefore(seconds = 3): Promise<string> {
  const stop = countCpu({});
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const cpu = stop();
  const line = `before the run: load average ${cpu.loadAverage.toFixed(2)}, neighbours ${percent(cpu.neighbours / cpu.machineCapacity)} of the machine, steal ${percent(cpu.machineSteal / cpu.machineCapacity)} (over ${seconds} s)`;
  print(line);
  return line;
}

/** The medians of the neighbours' share and the steal over a run's measurements, and whether both are under their bounds. */
export function quietness(measurements: Measurement[]): { quiet: boolean; text: string } {
  const neighbours = median(measurements.map((m) => m.neighbours));
  const steal = median(measurements.map((m) => m.steal));
  const load = median(measurements.map((m) => m.load));
  const quiet = neighbours <= QUIET_NEIGHBOURS && steal <= QUIET_STEAL;
  return {
    quiet,
    text: `during the run (medians): neighbours ${percent(neighbours)} of the machine (bound ${percent(QUIET_NEIGHBOURS)}), steal ${percent(steal)} (bound ${percent(QUIET_STEAL)}), load average ${load.toFixed(1)}: ${quiet ? 'quiet' : 'NOT QUIET, no verdict'}`,
  };
}

/** A target's verdict, or none on a machine that was not quiet. */
export function verdictFor(quiet: boolean): (ok: boolean) => string {
  return (ok) => (!quiet ? 'not quiet' : ok ? 'met' : 'MISSED');
}

/**
 * The interval that holds a median with at least `level` confidence, from the values alone (no
 * assumption about their distribution): the k-th smallest and k-th largest value, k the largest for
 * which a fair coin tossed n times comes up heads fewer than k times with probability at most
 * (1 - level) / 2. Undefined when there are too few values (fewer than 6 at 95 %).
 *
 * Why (docs/BENCHMARKS.md, "Reading a verdict"): on this kind of machine a 5-second measurement
 * of the same server moves a lot from one to the next, so the median of a run's rounds moves by
 * several points between runs; a verdict read off the median alone can be "met" in one run and
 * "missed" in the next for the same build.
 */
export function medianInterval(values: number[], level = 0.95): [number, number] | undefined {
  const n = values.length;
  const sorted = [...values].sort((a, b) => a - b);
  let k = 0;
  let below = 0; // P(heads <= k - 1), heads ~ Binomial(n, 1/2)
  let term = 0.5 ** n; // P(heads = k)
  while (k < n && below + term <= (1 - level) / 2) {
    below += term;
    term = (term * (n - k)) / (k + 1);
    k++;
  }
  return k === 0 ? undefined : [sorted[k - 1]!, sorted[n - k]!];
}

/** A median as the reports print it, with its 95 % interval (medianInterval): `93.1 % (95 % interval 88.2 %–95.9 %)`. */
export function medianWithInterval(values: number[], format: (v: number) => string): string {
  const bounds = medianInterval(values);
  return `${format(median(values))} (95 % interval ${bounds ? bounds.map(format).join('–') : 'none'})`;
}

/**
 * A target's verdict from the interval of a median: met when the whole interval is on the right
 * side of `bound`, MISSED when it is all on the wrong side, else undecided (more rounds narrow it);
 * "not quiet" on a machine that was not. `atLeast`: the target is value >= bound, else value <= bound.
 * `tolerance`: how far the values may be from the exact ones (values read back from printed,
 * rounded figures): an end of the interval within it of the bound decides nothing.
 */
export function intervalVerdict(quiet: boolean, interval: [number, number] | undefined, bound: number, atLeast: boolean, tolerance = 0): string {
  if (!quiet) return 'not quiet';
  if (!interval) return 'undecided (too few rounds for an interval)';
  const [low, high] = interval;
  if (atLeast ? low - tolerance >= bound : high + tolerance <= bound) return 'met';
  if (atLeast ? high + tolerance < bound : low - tolerance > bound) return 'MISSED';
  return 'undecided (the interval holds the bound: more rounds)';
}

/** A round's service against its floor in req/s, with each credential. */
export const floorRatios = (r: Record<FloorRoundKey, Measurement>) => ({ key: r.serviceKey.rps / r.floorKey.rps, bearer: r.serviceBearer.rps / r.floorBearer.rps });

/** Every round's floorRatios, as the lists printFloorTable and printFloorTargets take. */
export function floorRatiosOf(rounds: Record<FloorRoundKey, Measurement>[]): { key: number[]; bearer: number[] } {
  const each = rounds.map(floorRatios);
  return { key: each.map((r) => r.key), bearer: each.map((r) => r.bearer) };
}

/** The line a round's floorRatios are printed in, as bench/pooled-ratios.ts reads them back (FLOOR_RATIOS_LINE). */
export function floorRatiosLine(r: Record<FloorRoundKey, Measurement>): string {
  const { key, bearer } = floorRatios(r);
  return `service/floor: API key ${percent(key)}, bearer ${percent(bearer)}`;
}
export const FLOOR_RATIOS_LINE = /service\/floor: API key ([\d.]+) %, bearer ([\d.]+) %/;

/** A round read back from a run's output: its ratios of req/s, and of p99 where its output has them. */
export interface PrintedRound {
  key: number;
  bearer: number;
  p99Key?: number;
  p99Bearer?: number;
}

/**
 * How far a ratio read back from printed figures may be from the exact one: a ratio of req/s is
 * printed to 0.1 %; p99s to 0.1 ms, which moves a ratio of p99s of 15 ms or more (these paths':
 * tens of ms) by less than 0.01 near its bound of 1.3.
 */
export const PRINTED_TOLERANCE = { throughput: 0.0005, p99: 0.01 } as const;

/**
 * A run's rounds read back from its output (bench/pooled-ratios.ts): each round's ratios of req/s
 * from its floorRatiosLine, and its service's p99 over its floor's from the describe() lines before
 * it. Some early outputs kept the ratios lines alone: such a round has no p99 ratios. A round with
 * some of the four describe() lines but not all is refused (its lines would be paired wrongly).
 */
export function floorRoundsOf(output: string): PrintedRound[] {
  const rounds: PrintedRound[] = [];
  const labels = Object.values(FLOOR_ROUND_LABELS);
  let p99 = new Map<string, number>();
  for (const text of output.split('\n')) {
    const described = DESCRIBED_LINE.exec(text);
    if (described) p99.set(described[1]!, Number(described[2]));
    const ratios = FLOOR_RATIOS_LINE.exec(text);
    if (!ratios) continue;
    const round: PrintedRound = { key: Number(ratios[1]) / 100, bearer: Number(ratios[2]) / 100 };
    const found = labels.filter((label) => p99.has(label));
    if (found.length === labels.length) {
      const of = (key: keyof typeof FLOOR_ROUND_LABELS) => p99.get(FLOOR_ROUND_LABELS[key])!;
      round.p99Key = of('serviceKey') / of('floorKey');
      round.p99Bearer = of('serviceBearer') / of('floorBearer');
    } else if (found.length > 0) {
      throw new Error(`a round without its "${labels.find((label) => !p99.has(label))}" line`);
    }
    rounds.push(round);
    p99 = new Map();
  }
  return rounds;
}

/**
 * The median over runs, each run counted once as the median of its own rounds, with the 95 %
 * interval of that median (medianInterval: six runs at least). A run holds its processes fixed, and
 * identical processes can read several per cent apart within a run (docs/BENCHMARKS.md, "Reading a
 * verdict"), so a run's rounds share whatever its processes bring: this takes the run, not the round,
 * as what varies. A run without values (an output without p99s) is left out.
 */
export function runMedians(runs: number[][]): { medians: number[]; median: number | undefined; interval: [number, number] | undefined } {
  const medians = runs.filter((values) => values.length > 0).map(median);
  return { medians, median: medians.length > 0 ? median(medians) : undefined, interval: medianInterval(medians) };
}

/** A ratio of latencies, as the targets print it. */
export const times = (v: number) => `${v.toFixed(2)}x`;

/** The two targets against the floor: each round's service over its floor, in req/s and in p99. */
export const FLOOR_TARGETS = {
  throughput: { title: 'service >= 90 % of the floor', bound: 0.9, atLeast: true, format: percent },
  p99: { title: "p99 <= 1.3x the floor's", bound: 1.3, atLeast: false, format: times },
} as const;
type FloorTarget = (typeof FLOOR_TARGETS)[keyof typeof FLOOR_TARGETS];

/**
 * bench/pooled-ratios.ts's reading of one target with the runs as the unit: each run's median once
 * (runMedians), the median of those and its 95 % interval, and the verdict that interval allows;
 * with fewer than six runs, no interval and so no verdict.
 */
export function runsAsTheUnitLine(runs: number[][], target: FloorTarget, tolerance: number, quiet: boolean): string {
  const byRun = runMedians(runs);
  if (byRun.median === undefined) return 'runs as the unit: none of the runs has these values';
  const count = byRun.medians.length;
  const interval = byRun.interval ? byRun.interval.map(target.format).join('–') : 'none';
  const verdict = byRun.interval || !quiet ? intervalVerdict(quiet, byRun.interval, target.bound, target.atLeast, tolerance) : 'undecided (fewer than six runs give no interval)';
  return `runs as the unit: the medians of ${count} run${count === 1 ? '' : 's'} (${byRun.medians.map(target.format).join(', ')}), median ${target.format(byRun.median)} (95 % interval ${interval}) ${verdict}`;
}

/**
 * The run's quietness, then the two targets against the floor with both credentials: service
 * >= 90 % of the floor (the rounds' ratios of req/s), p99 <= 1.3x the floor's (the rounds' ratios
 * of p99, each round's service against the floor measured beside it). Each is given as the median
 * with its 95 % interval (medianInterval) and a verdict from the interval (intervalVerdict). The
 * ratio of the p99 medians, the reading of older figures, is printed beside it. Returns the verdict
 * for a benchmark's own targets (quiet or not, on a single figure).
 */
export function printFloorTargets(rounds: Record<FloorRoundKey, Measurement>[], ratios: { key: number[]; bearer: number[] }): (ok: boolean) => string {
  const quiet = quietness(rounds.flatMap((r) => Object.values(r)));
  print(`\n${quiet.text}`);
  print(`\ntargets (medians of ${rounds.length} rounds, with the interval that holds each median at 95 %; a verdict when the whole interval is on one side):`);
  const { throughput, p99 } = FLOOR_TARGETS;
  const verdict = (values: number[], target: FloorTarget) =>
    `${medianWithInterval(values, target.format)} ${intervalVerdict(quiet.quiet, medianInterval(values), target.bound, target.atLeast)}`;
  print(`  ${`${throughput.title}:`.padEnd(30)} API key ${verdict(ratios.key, throughput)}, bearer ${verdict(ratios.bearer, throughput)}`);
  const tails = (service: FloorRoundKey, floor: FloorRoundKey) => {
    const perRound = rounds.map((r) => r[service].p99 / r[floor].p99);
    const ofMedians = median(rounds.map((r) => r[service].p99)) / median(rounds.map((r) => r[floor].p99));
    return `${verdict(perRound, p99)} [ratio of the medians ${times(ofMedians)}]`;
  };
  print(`  ${`${p99.title}:`.padEnd(30)} API key ${tails('serviceKey', 'floorKey')}, bearer ${tails('serviceBearer', 'floorBearer')}`);
  return verdictFor(quiet.quiet);
}

type FloorRoundKey = 'floorKey' | 'serviceKey' | 'floorBearer' | 'serviceBearer';

/** How each of a round's four floor-side measurements is labelled in its describe() line (read back by bench/pooled-ratios.ts). */
export const FLOOR_ROUND_LABELS: Record<FloorRoundKey, string> = {
  floorKey: 'floor, API key',
  serviceKey: 'service, API key',
  floorBearer: 'floor, bearer',
  serviceBearer: 'service, bearer',
};
