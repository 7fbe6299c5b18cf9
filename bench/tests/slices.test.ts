// The benchmarks' sliced measurements (bench/support/measure.ts): each step measured in alternating
// slices, and the slices merged into one measurement whose percentiles are those of all its requests;
// and how a run's printed rounds are read back and judged across runs (bench/pooled-ratios.ts), the
// runs' rounds pooled and the runs themselves as the unit (runMedians, runsAsTheUnitLine).
import { describe, expect, it } from 'vitest';
import { FLOOR_ROUND_LABELS, describe as describeMeasurement, floorRatiosLine, FLOOR_TARGETS, PRINTED_TOLERANCE, floorRoundsOf, intervalVerdict, measureInTurn, mergeSlices, mergedPercentile, runMedians, runsAsTheUnitLine, type Measurement } from '../support/measure.js';

/** A distribution of requests spread evenly from `from` to `to` ms, at steps like bench/latencies.lua's (fewer near the top). */
function uniform(from: number, to: number): [number, number][] {
  const steps = [0, ...Array.from({ length: 18 }, (_, i) => 5 * (i + 1)), 91, 92, 93, 94, 95, 96, 97, 98, 98.5, 99, 99.5, 99.9, 100];
  return steps.map((p) => [p, from + ((to - from) * p) / 100]);
}

function slice(label: string, fields: Partial<Measurement>): Measurement {
  return { label, rps: 0, requests: 0, seconds: 1, p50: 0, p99: 0, mean: 0, failures: 0, nodeMs: 0, postgresMs: 0, steal: 0, busy: 0, load: 0, neighbours: 0, ...fields };
}

describe('mergedPercentile', () => {
  it("gives one run's own percentiles back, and the same for several runs alike", () => {
    const run = { requests: 1000, latencies: uniform(2, 12) };
    expect(mergedPercentile([run], 50)).toBeCloseTo(7, 4);
    expect(mergedPercentile([run], 99)).toBeCloseTo(11.9, 4);
    expect(mergedPercentile([run, run, run], 99)).toBeCloseTo(11.9, 4);
  });

  it('is the percentile of all the requests together, not a mean of the runs percentiles', () => {
    const fast = { requests: 1000, latencies: uniform(0, 10) };
    const slow = { requests: 1000, latencies: uniform(10, 20) };
    // Half the requests are under 10 ms; the slowest 1 % of all is the slowest 2 % of the slow run.
    expect(mergedPercentile([fast, slow], 50)).toBeCloseTo(10, 4);
    expect(mergedPercentile([fast, slow], 99)).toBeCloseTo(19.8, 4);
    // The mean of the two p99s (9.9 and 19.9 ms) would be 14.9 ms.
  });

  it('weighs each run by its requests', () => {
    const fast = { requests: 3000, latencies: uniform(0, 10) };
    const slow = { requests: 1000, latencies: uniform(10, 20) };
    // 75 % of the requests are the fast run's: the median is its two-thirds point.
    expect(mergedPercentile([fast, slow], 50)).toBeCloseTo(20 / 3, 4);
    expect(mergedPercentile([fast, slow], 99)).toBeCloseTo(19.6, 4);
  });
});

describe('mergedPercentile, the edges', () => {
  it('reads a step where many requests took the same time (a vertical jump) without dividing by zero', () => {
    const bunched = { requests: 1000, latencies: [[0, 5], [90, 5], [100, 10]] as [number, number][] };
    expect(mergedPercentile([bunched], 50)).toBeCloseTo(5, 4);
    expect(mergedPercentile([bunched], 95)).toBeCloseTo(7.5, 4);
  });

  it('leaves out a slice that answered nothing, and refuses to guess when nothing was answered or a distribution is cut', () => {
    const run = { requests: 1000, latencies: uniform(2, 12) };
    expect(mergedPercentile([{ requests: 0, latencies: [] }, run], 99)).toBeCloseTo(11.9, 4);
    expect(() => mergedPercentile([{ requests: 0, latencies: [] }], 99)).toThrow(/no requests/);
    expect(() => mergedPercentile([{ requests: 10, latencies: [] }], 99)).toThrow(/0 step to its 100 step/);
    expect(() => mergedPercentile([{ requests: 10, latencies: [[50, 3], [100, 4]] }], 99)).toThrow(/0 step to its 100 step/);
  });
});

describe('mergeSlices', () => {
  it('adds requests and seconds, weighs CPU per request by requests and the machine by time', () => {
    const a = slice('service', { requests: 1000, seconds: 1, nodeMs: 0.5, postgresMs: 1, neighbours: 0.02, failures: 1, mean: 10, latencies: uniform(0, 10) });
    const b = slice('service', { requests: 3000, seconds: 1, nodeMs: 0.7, postgresMs: 2, neighbours: 0.04, failures: 2, mean: 20, latencies: uniform(10, 20) });
    const merged = mergeSlices([a, b]);
    expect(merged).toMatchObject({ label: 'service', requests: 4000, seconds: 2, rps: 2000, failures: 3 });
    expect(merged.nodeMs).toBeCloseTo(0.65, 10);
    expect(merged.postgresMs).toBeCloseTo(1.75, 10);
    expect(merged.mean).toBeCloseTo(17.5, 10);
    expect(merged.neighbours).toBeCloseTo(0.03, 10);
    expect(merged.p50).toBeCloseTo(40 / 3, 4);
  });

  it('refuses slices without a latency distribution rather than guess their percentiles', () => {
    expect(() => mergeSlices([slice('a', { requests: 1 }), slice('a', { requests: 1 })])).toThrow(/latency distribution/);
  });
});

describe('measureInTurn', () => {
  /** Steps that record their names in the order they run (with each slice's seconds when `withSeconds`). */
  const recording = (names: string[], withSeconds = false) => {
    const calls: string[] = [];
    const steps = Object.fromEntries(
      names.map((name) => [
        name,
        async (seconds: number) => {
          calls.push(withSeconds ? `${name}${seconds}` : name);
          return slice(name, { requests: 100, seconds, latencies: uniform(1, 2) });
        },
      ]),
    );
    return { calls, steps };
  };
  const recorder = () => recording(['a', 'b', 'c'], true);

  it('reverses the order at every slice and every round, and gives each step its slices merged', async () => {
    const odd = recorder();
    const r = await measureInTurn(1, odd.steps, { seconds: 6, slices: 3 });
    expect(odd.calls).toEqual(['a2', 'b2', 'c2', 'c2', 'b2', 'a2', 'a2', 'b2', 'c2']);
    expect(r.b).toMatchObject({ label: 'b', requests: 300, seconds: 6 });
    const even = recorder();
    await measureInTurn(2, even.steps, { seconds: 4, slices: 2 });
    expect(even.calls).toEqual(['c2', 'b2', 'a2', 'a2', 'b2', 'c2']);
  });

  it('puts every step in every place of the round equally often over 2 x n rounds, in blocks and in slices: no step keeps the edges or the middle', async () => {
    for (const n of [4, 5]) {
      const steps = 'abcde'.slice(0, n).split('');
      for (const slices of [1, 3]) {
        const first = new Map(steps.map((step) => [step, steps.map(() => 0)]));
        const last = new Map(steps.map((step) => [step, steps.map(() => 0)]));
        for (let round = 1; round <= 2 * n; round++) {
          const { calls, steps: recorded } = recording(steps);
          await measureInTurn(round, recorded, { seconds: slices, slices });
          // The places of the round's first slice, and of its last (the round's two edges).
          calls.slice(0, n).forEach((call, place) => first.get(call)![place]!++);
          calls.slice(-n).forEach((call, place) => last.get(call)![place]!++);
        }
        for (const step of steps) {
          expect(first.get(step), `n = ${n}, ${slices} slices`).toEqual(steps.map(() => 2));
          expect(last.get(step), `n = ${n}, ${slices} slices`).toEqual(steps.map(() => 2));
        }
      }
    }
  });

  it('puts every step right after every other equally often over 2 x n rounds, in blocks and in slices: no step always follows the same neighbours', async () => {
    for (const n of [4, 5, 6]) {
      const names = 'abcdef'.slice(0, n).split('');
      for (const slices of [1, 3]) {
        const after = new Map<string, number>(); // "a>b": how often b ran right after a, within a round
        for (let round = 1; round <= 2 * n; round++) {
          const { calls, steps } = recording(names);
          await measureInTurn(round, steps, { seconds: slices, slices });
          calls.slice(1).forEach((call, i) => {
            const pair = `${calls[i]}>${call}`;
            after.set(pair, (after.get(pair) ?? 0) + 1);
          });
        }
        const others = names.flatMap((a) => names.filter((b) => b !== a).map((b) => after.get(`${a}>${b}`) ?? 0));
        expect(new Set(others), `n = ${n}, ${slices} slices`).toEqual(new Set([others[0]]));
        expect(others[0]).toBeGreaterThan(0);
        // With slices, a step follows itself where the order turns back (the round's edges): as often for every step.
        expect(new Set(names.map((a) => after.get(`${a}>${a}`) ?? 0)).size).toBe(1);
      }
    }
  });

  it('measures in one block per step without slices, and refuses slices that are not whole seconds', async () => {
    const block = recorder();
    await measureInTurn(2, block.steps, { seconds: 5 });
    expect(block.calls).toEqual(['c5', 'b5', 'a5']);
    await expect(measureInTurn(1, recorder().steps, { seconds: 5, slices: 2 })).rejects.toThrow(/whole seconds/);
  });
});

describe('floorRoundsOf (bench/pooled-ratios.ts)', () => {
  const fourOf = (p99: { floorKey: number; serviceKey: number; floorBearer: number; serviceBearer: number }, rps: number) => ({
    floorKey: slice(FLOOR_ROUND_LABELS.floorKey, { rps: 1000, p99: p99.floorKey }),
    serviceKey: slice(FLOOR_ROUND_LABELS.serviceKey, { rps, p99: p99.serviceKey }),
    floorBearer: slice(FLOOR_ROUND_LABELS.floorBearer, { rps: 1000, p99: p99.floorBearer }),
    serviceBearer: slice(FLOOR_ROUND_LABELS.serviceBearer, { rps: rps / 2, p99: p99.serviceBearer }),
  });
  const ratiosLine = (measured: ReturnType<typeof fourOf>) => `  ${floorRatiosLine(measured)}; floor/bare: API key 1.0 %, bearer 1.0 %`;

  it("reads each round's req/s ratios and p99 ratios back from the lines a benchmark prints, in the benchmarks' order, whatever else the round measured", () => {
    const round = (measured: ReturnType<typeof fourOf>) => {
      // Bare Express first, as users-list.ts prints a round, and, as tasks-list.ts does, a step whose
      // label starts with the service's (longer than describe()'s column, at 6-digit req/s) right after it.
      const bare = slice('bare Express, from memory', { rps: 123456, p99: 1 });
      const deep = slice("service, API key, the millionth task's page", { rps: 654321, p99: 999.9 });
      const lines = [bare, measured.floorKey, measured.serviceKey, deep, measured.floorBearer, measured.serviceBearer].map(describeMeasurement);
      return `round 1\n${lines.join('\n')}\n${ratiosLine(measured)}\n`;
    };
    const output = round(fourOf({ floorKey: 50, serviceKey: 65, floorBearer: 40, serviceBearer: 44 }, 920)) + round(fourOf({ floorKey: 100.5, serviceKey: 100.5, floorBearer: 8, serviceBearer: 12 }, 1000));
    const rounds = floorRoundsOf(output);
    expect(rounds).toHaveLength(2);
    expect(rounds[0]).toMatchObject({ key: 0.92, bearer: 0.46 });
    expect(rounds[0]!.p99Key).toBeCloseTo(1.3, 10);
    expect(rounds[0]!.p99Bearer).toBeCloseTo(1.1, 10);
    expect(rounds[1]).toMatchObject({ key: 1, bearer: 0.5, p99Key: 1 });
    expect(rounds[1]!.p99Bearer).toBeCloseTo(1.5, 10);
  });

  it("keeps the req/s ratios of an output that printed its ratios lines only, without p99s", () => {
    const measured = fourOf({ floorKey: 50, serviceKey: 60, floorBearer: 50, serviceBearer: 60 }, 900);
    const rounds = floorRoundsOf(`${ratiosLine(measured)}\n${ratiosLine(measured)}\n`);
    expect(rounds).toEqual([{ key: 0.9, bearer: 0.45 }, { key: 0.9, bearer: 0.45 }]);
  });

  it('refuses a round that lacks one of its four measurements rather than pair it with another round', () => {
    const measured = fourOf({ floorKey: 50, serviceKey: 60, floorBearer: 50, serviceBearer: 60 }, 900);
    const full = `${Object.values(measured).map(describeMeasurement).join('\n')}\n${ratiosLine(measured)}\n`;
    const lacking = `${[measured.floorKey, measured.serviceKey, measured.floorBearer].map(describeMeasurement).join('\n')}\n${ratiosLine(measured)}\n`;
    expect(floorRoundsOf(full)).toHaveLength(1);
    expect(() => floorRoundsOf(full + lacking)).toThrow(/service, bearer/);
  });
});

describe('intervalVerdict, for figures read back rounded', () => {
  it('decides nothing when an end of the interval is within the rounding of the bound', () => {
    expect(intervalVerdict(true, [0.9, 0.94], 0.9, true)).toBe('met');
    expect(intervalVerdict(true, [0.9, 0.94], 0.9, true, 0.0005)).toMatch(/^undecided/);
    expect(intervalVerdict(true, [0.9006, 0.94], 0.9, true, 0.0005)).toBe('met');
    expect(intervalVerdict(true, [1.2, 1.295], 1.3, false, 0.01)).toMatch(/^undecided/);
    expect(intervalVerdict(true, [1.2, 1.285], 1.3, false, 0.01)).toBe('met');
    expect(intervalVerdict(true, [1.305, 1.4], 1.3, false, 0.01)).toMatch(/^undecided/);
    expect(intervalVerdict(true, [1.315, 1.4], 1.3, false, 0.01)).toBe('MISSED');
  });
});

describe('runMedians and runsAsTheUnitLine (bench/pooled-ratios.ts: runs as the unit)', () => {
  const runOf = (at: number, rounds = 10) => Array.from({ length: rounds }, () => at);

  it('counts each run once, however many rounds it took, so one long run does not outvote six short ones', () => {
    // Pooled, the long run's 140 rounds would carry the median above the bound; by run, six of seven are below.
    const byRun = runMedians([runOf(0.895), runOf(0.896), runOf(0.897), runOf(0.898), runOf(0.899), runOf(0.894), runOf(0.95, 140)]);
    expect(byRun.medians).toHaveLength(7);
    expect(byRun.median).toBeCloseTo(0.897, 10);
    expect(byRun.interval).toEqual([0.894, 0.95]);
  });

  it("takes each run's median, not its mean: one slow round moves a run's mean, not its median", () => {
    expect(runMedians([[0.5, ...runOf(0.895, 9)]]).medians).toEqual([0.895]);
  });

  it('gives no interval with fewer than six runs, and leaves out a run without values', () => {
    const five = runMedians([[0.91], [0.92], [0.93], [0.94], [0.95], []]);
    expect(five.medians).toEqual([0.91, 0.92, 0.93, 0.94, 0.95]);
    expect(five.median).toBe(0.93);
    expect(five.interval).toBeUndefined();
    expect(runMedians([[], []]).median).toBeUndefined();
  });

  it('prints a verdict only from six runs on, and only on a quiet machine', () => {
    const { throughput, p99 } = FLOOR_TARGETS;
    const line = (runs: number[][], quiet = true) => runsAsTheUnitLine(runs, throughput, PRINTED_TOLERANCE.throughput, quiet);
    expect(line([runOf(0.95)])).toBe('runs as the unit: the medians of 1 run (95.0 %), median 95.0 % (95 % interval none) undecided (fewer than six runs give no interval)');
    expect(line([0.91, 0.92, 0.93, 0.94, 0.95].map((at) => runOf(at)))).toMatch(/^runs as the unit: the medians of 5 runs .* undecided \(fewer than six runs/);
    const sevenAbove = [0.91, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97].map((at) => runOf(at));
    expect(line(sevenAbove)).toMatch(/median 94\.0 % \(95 % interval 91\.0 %–97\.0 %\) met$/);
    expect(line(sevenAbove, false)).toMatch(/ not quiet$/);
    expect(line([runOf(0.899), ...sevenAbove.slice(1)])).toMatch(/ undecided \(the interval holds the bound/);
    expect(runsAsTheUnitLine([runOf(1.4), runOf(1.35), runOf(1.5), runOf(1.32), runOf(1.33), runOf(1.6)], p99, PRINTED_TOLERANCE.p99, true)).toMatch(/ MISSED$/);
    expect(line([[], []])).toBe('runs as the unit: none of the runs has these values');
  });
});
