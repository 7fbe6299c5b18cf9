-- wrk script of a GET measurement (bench/support/wrk.ts adds it when a run has no script of its
-- own): prints the latency distribution at fine steps after wrk's own report, so that the
-- latencies of several short measurements can be merged into one (measure.ts, mergeSlices).
-- No request() or response(): wrk sends its one static request, as without a script.
-- One line per step: "latency <percent> <microseconds>", 0 the fastest answer and 100 the slowest.
function done(summary, latency, requests)
  -- No answer, no distribution (wrk's min would be its placeholder): the slice adds no latencies.
  if summary.requests == 0 then return end
  local steps = { 0 }
  for p = 5, 90, 5 do table.insert(steps, p) end
  for p = 91, 98 do table.insert(steps, p) end
  for i = 981, 999 do table.insert(steps, i / 10) end
  for _, p in ipairs({ 99.95, 99.99 }) do table.insert(steps, p) end
  io.write(string.format("latency 0 %d\n", latency.min))
  for i = 2, #steps do io.write(string.format("latency %.2f %d\n", steps[i], latency:percentile(steps[i]))) end
  io.write(string.format("latency 100 %d\n", latency.max))
end
