// The throughput and p99 targets of issue 34 read across several runs of one benchmark: each run's rounds
// (its "service/floor: API key x %, bearer y %" lines, floorRatiosLine's, as users-list.ts,
// tasks-list.ts and meetings-week.ts print them), then all of them together, each as the median
// of the rounds' ratios with its 95 % interval and the verdict that interval allows
// (bench/support/measure.ts).
// One run's interval cannot see what differs between runs (the hour, the host); rounds of several
// runs taken together at least sample more than one hour, though their interval still treats every
// round as alike, so what the hour changes is averaged, not accounted for. Give it only runs that
// measure the same request path.
// Usage: node --import tsx bench/pooled-ratios.ts <output of a run> <output of another run> ...
import { readFileSync } from 'node:fs';
import { floorRoundsOf, intervalVerdict, medianInterval, medianWithInterval, percent, print } from './support/measure.js';

const runs = process.argv.slice(2).map((file) => {
  const output = readFileSync(file, 'utf8');
  return {
    file,
    // A run's quietness line, as printFloorTargets prints it (a run cut short has none: not quiet).
    quiet: /during the run \(medians\):.*: quiet$/m.test(output),
    rounds: floorRoundsOf(output),
  };
});
if (runs.length === 0 || runs.some((run) => run.rounds.length === 0)) {
  throw new Error('give the output of one or more runs, each with its "service/floor: ..." lines');
}

const times = (v: number) => `${v.toFixed(2)}x`;
const targets = [
  { title: 'service >= 90 % of the floor', format: percent, bound: 0.9, atLeast: true, key: 'key', bearer: 'bearer' },
  // Each round's service p99 over the floor's measured beside it, as printFloorTargets reads one run.
  { title: "p99 <= 1.3x the floor's", format: times, bound: 1.3, atLeast: false, key: 'p99Key', bearer: 'p99Bearer' },
] as const;
const allQuiet = runs.every((run) => run.quiet);
for (const { title, format, bound, atLeast, ...fields } of targets) {
  const line = (label: string, values: number[], quiet: boolean) =>
    `${label}: ${values.length} rounds, ${medianWithInterval(values, format)} ${intervalVerdict(quiet, medianInterval(values), bound, atLeast)}`;
  for (const credential of ['key', 'bearer'] as const) {
    const field = fields[credential];
    print(`${title}, ${credential === 'key' ? 'API key' : 'bearer'}:`);
    for (const run of runs) print(`  ${line(run.file, run.rounds.map((r) => r[field]), run.quiet)}`);
    print(`  ${line('all together', runs.flatMap((run) => run.rounds.map((r) => r[field])), allQuiet)}`);
  }
}
