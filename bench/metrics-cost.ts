// What the metrics add to a request's CPU, measured where it is spent: the service's own
// observeRequest (the histogram of operation and status class) and one outcome counter, a million
// calls each, in rounds, median CPU ns per call. Compare with a GET /users' Node CPU (docs/BENCHMARKS.md).
// No database is touched (the scrape-time gauges cost nothing per request).
import { loadavg } from 'node:os';
import { serviceMetrics } from '../src/metrics/registry.js';
import { systemClock } from '../src/clock.js';
import { median, print } from './support/measure.js';

const CALLS = 1_000_000;
const ROUNDS = 7;
const metrics = serviceMetrics({ db: undefined as never, pool: undefined as never, clock: systemClock });
const perCall = (work: (i: number) => void) =>
  median(
    Array.from({ length: ROUNDS }, () => {
      // CPU time, not wall time: on a shared machine the wall clock also counts other processes' turns.
      const started = process.cpuUsage();
      for (let i = 0; i < CALLS; i++) work(i);
      const used = process.cpuUsage(started);
      return ((used.user + used.system) * 1e3) / CALLS;
    }),
  );
const observe = perCall((i) => metrics.observeRequest('listUsers', 200, 0.002 + (i % 13) * 0.004));
const count = perCall(() => metrics.outcomes.apiKeyAuthentication('accepted'));
print(`per request: observeRequest ${observe.toFixed(0)} ns, an outcome counter ${count.toFixed(0)} ns (CPU time, median of ${ROUNDS} rounds of ${CALLS} calls; load ${loadavg()[0]!.toFixed(1)})`);
