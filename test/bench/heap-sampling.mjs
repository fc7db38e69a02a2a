/**
 * The inspector's sampling heap profile, for the probes the process benches load into the server
 * (fanout-probe.mjs, memory-probe.mjs): one profile at a time, 4 KB sampling interval, objects a
 * major GC collected included. Plain JavaScript, like the probes.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

/** The inspector session of the heap profile in progress. */
let session;

/**
 * Starts sampling. `includeMinor`: also what a scavenge collected (all garbage); false: only what
 * outlived a scavenge (promoted or pretenured: what fills the old generation).
 */
export async function startHeapSampling(includeMinor) {
  session = new Session();
  session.connect();
  await session.post("HeapProfiler.enable");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 4096,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: includeMinor,
  });
}

/** Stops sampling and writes the profile to `file` (a .heapprofile, as DevTools reads it). */
export async function stopHeapSampling(file) {
  const { profile } = await session.post("HeapProfiler.stopSampling");
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  session = undefined;
}
