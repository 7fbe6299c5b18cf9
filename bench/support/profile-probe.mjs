// Preloaded into a server under benchmark (see bench/profile.ts): the first SIGUSR2 starts V8's
// CPU profiler (sampling every 100 µs), the next one stops it and writes the profile
// (.cpuprofile JSON) to $PROFILE_REPORT. With PROFILE_KIND=heap, V8's sampling heap profiler
// instead, counting objects collected meanwhile too (.heapprofile JSON): what allocates; with
// PROFILE_KIND=survivors, only what outlived the young generation: what makes scavenges slow.
// Plain JavaScript, so the compiled service needs no loader.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));
let running = false;
const heap = process.env.PROFILE_KIND === 'heap' || process.env.PROFILE_KIND === 'survivors';
const survivorsOnly = process.env.PROFILE_KIND === 'survivors';

process.on('SIGUSR2', async () => {
  if (!running) {
    running = true;
    if (heap) {
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: !survivorsOnly });
    } else {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 100 });
      await post('Profiler.start');
    }
    return;
  }
  running = false;
  const { profile } = await post(heap ? 'HeapProfiler.stopSampling' : 'Profiler.stop');
  writeFileSync(process.env.PROFILE_REPORT, JSON.stringify(profile));
});
