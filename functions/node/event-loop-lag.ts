/**
 * Event-loop lag on Node (perf_hooks.monitorEventLoopDelay) as edgepilot_event_loop_lag_seconds
 * gauges: the mean, p99 and max delay since the previous scrape (the histogram resets at each).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { Registry } from "../../lib/metrics/index.ts";

/** Starts sampling (every 10 ms) and declares the gauges on `registry`; returns the stop function. */
export function addEventLoopLag(registry: Registry): () => void {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const lag = registry.gauge({
    name: "edgepilot_event_loop_lag_seconds",
    help: "Event-loop delay since the previous scrape (Node perf_hooks), by statistic: mean, p99, max.",
    labelNames: ["stat"],
  });
  const mean = lag.labels("mean");
  const p99 = lag.labels("p99");
  const max = lag.labels("max");
  registry.collect(() => {
    // Before the first sample the histogram holds NaN mean and a huge min: report zeros.
    const sampled = delay.count > 0;
    mean.set(sampled ? delay.mean / 1e9 : 0);
    p99.set(sampled ? delay.percentile(99) / 1e9 : 0);
    max.set(sampled ? delay.max / 1e9 : 0);
    delay.reset();
  });
  return () => delay.disable();
}
