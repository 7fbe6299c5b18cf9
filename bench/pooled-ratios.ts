// The throughput targets of issue 34 read across several runs of one benchmark: each run's rounds
// (its "service/floor: API key x %, bearer y %" lines, as users-list.ts, tasks-list.ts and
// meetings-week.ts print them), then all of them together, each as the median of the rounds'
// ratios with its 95 % interval and the verdict that interval allows (bench/support/measure.ts).
// One run's interval cannot see what differs between runs (the hour, the host); the rounds of
// several runs of the same code, taken together, can. Pooling assumes the runs measure the same
// request path: give it only runs whose service differs in nothing on that path.
// Usage: node --import tsx bench/pooled-ratios.ts <output of a run> <output of another run> ...
import { readFileSync } from 'node:fs';
import { intervalVerdict, median, medianInterval, percent, print } from './support/measure.js';

const ROUND = /service\/floor: API key ([\d.]+) %, bearer ([\d.]+) %/g;

const runs = process.argv.slice(2).map((file) => ({
  file,
  rounds: [...readFileSync(file, 'utf8').matchAll(ROUND)].map((m) => ({ key: Number(m[1]) / 100, bearer: Number(m[2]) / 100 })),
}));
if (runs.length === 0 || runs.some((run) => run.rounds.length === 0)) {
  throw new Error('give the output of one or more runs, each with its "service/floor: ..." lines');
}

const line = (label: string, ratios: number[]) => {
  const interval = medianInterval(ratios);
  // The runs were quiet, or they would not be given here: the verdict is the interval's.
  return `${label}: ${ratios.length} rounds, ${percent(median(ratios))} (95 % interval ${interval ? interval.map(percent).join('–') : 'none'}) ${intervalVerdict(true, interval, 0.9, true)}`;
};
for (const credential of ['key', 'bearer'] as const) {
  print(`service >= 90 % of the floor, ${credential === 'key' ? 'API key' : 'bearer'}:`);
  for (const run of runs) print(`  ${line(run.file, run.rounds.map((r) => r[credential]))}`);
  print(`  ${line('all together', runs.flatMap((run) => run.rounds.map((r) => r[credential])))}`);
}
