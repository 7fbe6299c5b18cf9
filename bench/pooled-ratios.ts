// The throughput targets of issue 34 read across several runs of one benchmark: each run's rounds
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
import { FLOOR_RATIOS_LINE, intervalVerdict, medianInterval, medianWithInterval, percent, print } from './support/measure.js';

const runs = process.argv.slice(2).map((file) => {
  const output = readFileSync(file, 'utf8');
  return {
    file,
    // A run's quietness line, as printFloorTargets prints it (a run cut short has none: not quiet).
    quiet: /during the run \(medians\):.*: quiet$/m.test(output),
    rounds: [...output.matchAll(new RegExp(FLOOR_RATIOS_LINE, 'g'))].map((m) => ({ key: Number(m[1]) / 100, bearer: Number(m[2]) / 100 })),
  };
});
if (runs.length === 0 || runs.some((run) => run.rounds.length === 0)) {
  throw new Error('give the output of one or more runs, each with its "service/floor: ..." lines');
}

const line = (label: string, ratios: number[], quiet: boolean) =>
  `${label}: ${ratios.length} rounds, ${medianWithInterval(ratios, percent)} ${intervalVerdict(quiet, medianInterval(ratios), 0.9, true)}`;
const allQuiet = runs.every((run) => run.quiet);
for (const credential of ['key', 'bearer'] as const) {
  print(`service >= 90 % of the floor, ${credential === 'key' ? 'API key' : 'bearer'}:`);
  for (const run of runs) print(`  ${line(run.file, run.rounds.map((r) => r[credential]), run.quiet)}`);
  print(`  ${line('all together', runs.flatMap((run) => run.rounds.map((r) => r[credential])), allQuiet)}`);
}
