// The service's targets against its floor, read across several runs of one benchmark: each run's
// rounds (floorRoundsOf: its "service/floor: API key x %, bearer y %" lines, floorRatiosLine's, and
// the describe() lines of the round's four floor-side measurements, for the p99s, as users-list.ts,
// tasks-list.ts and meetings-week.ts print them), then all of them together, each as the median of
// the rounds' ratios with its 95 % interval and the verdict that interval allows
// (bench/support/measure.ts), to the rounding of the printed figures (PRINTED_TOLERANCE).
// One run's interval cannot see what differs between runs (the hour, the host, and the processes
// themselves: see runMedians); rounds of several runs taken together sample more than one of each,
// though their interval still treats every round as alike. So the runs are also read as the unit
// (runsAsTheUnitLine): each run's median once, and the interval of their median, which needs six
// runs. Give it only runs that measure the same request path.
// Usage: node --import tsx bench/pooled-ratios.ts <output of a run> <output of another run> ...
import { readFileSync } from 'node:fs';
import { FLOOR_TARGETS, PRINTED_TOLERANCE, floorRoundsOf, intervalVerdict, medianInterval, medianWithInterval, print, runsAsTheUnitLine, type PrintedRound } from './support/measure.js';

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
  throw new Error('give the output of one or more runs, each with its "service/floor: ..." lines (and, for the p99s, the describe() lines before each)');
}

const allQuiet = runs.every((run) => run.quiet);
const pooled = [
  { target: FLOOR_TARGETS.throughput, tolerance: PRINTED_TOLERANCE.throughput, key: 'key', bearer: 'bearer' },
  { target: FLOOR_TARGETS.p99, tolerance: PRINTED_TOLERANCE.p99, key: 'p99Key', bearer: 'p99Bearer' },
] as const;
for (const { target, tolerance, ...fields } of pooled) {
  const line = (label: string, values: number[], quiet: boolean) =>
    values.length === 0
      ? `${label}: none of its rounds has the describe() lines this needs`
      : `${label}: ${values.length} rounds, ${medianWithInterval(values, target.format)} ${intervalVerdict(quiet, medianInterval(values), target.bound, target.atLeast, tolerance)}`;
  for (const credential of ['key', 'bearer'] as const) {
    const of = (rounds: PrintedRound[]) => rounds.flatMap((r) => r[fields[credential]] ?? []);
    print(`${target.title}, ${credential === 'key' ? 'API key' : 'bearer'}:`);
    for (const run of runs) print(`  ${line(run.file, of(run.rounds), run.quiet)}`);
    print(`  ${line('all together', runs.flatMap((run) => of(run.rounds)), allQuiet)}`);
    print(`  ${runsAsTheUnitLine(runs.map((run) => of(run.rounds)), target, tolerance, allQuiet)}`);
  }
}
