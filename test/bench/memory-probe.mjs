/**
 * Loaded by test/bench/memory.ts into the server it measures (`node --expose-gc --import
 * ./memory-probe.mjs <npm start's entry>`): answers `{ kind: "sample" }` on the IPC channel with
 * the process's memory after a full GC, and `{ kind: "snapshot", file }` with a heap snapshot. Plain JavaScript, so the server runs as `npm start` runs
 * it, with no TypeScript loader in the process.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { getHeapSpaceStatistics, getHeapStatistics, writeHeapSnapshot } from "node:v8";
import { startHeapSampling, stopHeapSampling } from "./heap-sampling.mjs";

const delay = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resident set size from the kernel (bytes), read fresh each time. */
const rss = () => process.memoryUsage.rss();

process.on("message", async (m) => {
  if (m?.kind === "snapshot") {
    writeHeapSnapshot(m.file);
    process.send({ kind: "snapshot" });
    return;
  }
  if (m?.kind === "heap-start") {
    // What outlives a scavenge (promoted or pretenured) is what fills the old generation between pushes.
    await startHeapSampling(false);
    process.send({ kind: "heap-start" });
    return;
  }
  if (m?.kind === "heap-stop") {
    await stopHeapSampling(m.file);
    process.send({ kind: "heap-stop" });
    return;
  }
  if (m?.kind !== "sample") return;
  globalThis.gc();
  globalThis.gc();
  // V8 unmaps the pages a GC freed on a background thread: read RSS once it has stopped falling,
  // not while the freed pages are still mapped (that read made garbage look like growth).
  const atGc = rss();
  let last = atGc;
  for (let i = 0; i < 40; i++) {
    await delay(50);
    const now = rss();
    if (Math.abs(now - last) < 256 * 1024 && i >= 3) break;
    last = now;
  }
  const usage = process.memoryUsage();
  // MEMORY_SMAPS_DIR: the mappings behind the figure (`/proc/self/smaps`, Linux), for diagnosis.
  if (m.smapsFile) {
    writeFileSync(m.smapsFile, readFileSync("/proc/self/smaps"));
    const v8 = { heap: getHeapStatistics(), spaces: getHeapSpaceStatistics() };
    writeFileSync(m.smapsFile.replace(/\.smaps$/, ".v8.json"), JSON.stringify(v8, null, 1));
  }
  process.send({ kind: "sample", usage, rssAtGc: atGc, spaces: getHeapSpaceStatistics() });
});
// The IPC channel must not keep the server up once it stops.
process.channel?.unref();
