// Preloaded into a server under benchmark (`node --import ./bench/support/allocation-probe.mjs`,
// see bench/allocation.ts): the first SIGUSR2 starts counting what the JavaScript heap allocates,
// the next one stops and writes {allocated, gcs, gcMs} as JSON to $ALLOCATION_REPORT. Allocated
// bytes = what every garbage collection meanwhile freed + how much the heap grew; collected
// objects count, which a heap snapshot would miss. Plain JavaScript, so the compiled service
// needs no TypeScript loader.
import { writeFileSync } from 'node:fs';
import v8 from 'node:v8';

let profiler;
let usedAtStart = 0;

process.on('SIGUSR2', () => {
  if (!profiler) {
    profiler = new v8.GCProfiler();
    profiler.start();
    usedAtStart = v8.getHeapStatistics().used_heap_size;
    return;
  }
  const usedAtEnd = v8.getHeapStatistics().used_heap_size;
  const { statistics } = profiler.stop();
  profiler = undefined;
  const freed = statistics.reduce((sum, gc) => sum + gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize, 0);
  const gcMs = statistics.reduce((sum, gc) => sum + gc.cost, 0) / 1000; // cost is in microseconds
  const byType = {};
  for (const gc of statistics) {
    const t = (byType[gc.gcType] ??= { count: 0, ms: 0 });
    t.count += 1;
    t.ms += gc.cost / 1000;
  }
  writeFileSync(process.env.ALLOCATION_REPORT, JSON.stringify({ allocated: freed + usedAtEnd - usedAtStart, gcs: statistics.length, gcMs, byType }));
});
