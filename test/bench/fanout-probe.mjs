/**
 * Loaded by test/bench/fanout.ts into the server it measures (`node --import ./fanout-probe.mjs
 * <npm start's flags and entry>`). Answers on the IPC channel:
 * - `{ kind: "settled" }` once this process's event loop is idle (two 10 ms timers in a row fire
 *   on time), with `cpu`: the process's CPU (process.cpuUsage, µs) at that moment;
 * - `{ kind: "profile-start" }` / `{ kind: "profile-stop", file }`: a CPU profile (the inspector's)
 *   of what runs between them, written to `file`, sampled every FANOUT_PROFILE_INTERVAL_US µs
 *   (default 1000, the inspector's);
 * - `{ kind: "heap-start" }` / `{ kind: "heap-stop", file }`: the inspector's sampling heap profile
 *   of what was allocated between them, garbage included (what the GC collects), written to `file`.
 * Plain JavaScript, so the server runs as `npm start` runs it, with no TypeScript loader.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";
import { startHeapSampling, stopHeapSampling } from "./heap-sampling.mjs";

const delay = (ms) => new Promise((r) => setTimeout(r, ms));
let session;

process.on("message", async (m) => {
  if (m?.kind === "settled") {
    const until = performance.now() + 2000;
    let calm = 0;
    while (calm < 2 && performance.now() < until) {
      const t = performance.now();
      await delay(10);
      calm = performance.now() - t < 13 ? calm + 1 : 0;
    }
    const used = process.cpuUsage();
    process.send({ kind: "settled", cpu: used.user + used.system });
  } else if (m?.kind === "profile-start") {
    session = new Session();
    session.connect();
    await session.post("Profiler.enable");
    const interval = Number(process.env.FANOUT_PROFILE_INTERVAL_US ?? 1000);
    await session.post("Profiler.setSamplingInterval", { interval });
    await session.post("Profiler.start");
    process.send({ kind: "profile-start" });
  } else if (m?.kind === "heap-start") {
    // FANOUT_HEAP_OLD=1: only what outlived a scavenge (promoted or pretenured: the old space's garbage).
    await startHeapSampling(process.env.FANOUT_HEAP_OLD !== "1");
    process.send({ kind: "heap-start" });
  } else if (m?.kind === "heap-stop") {
    await stopHeapSampling(m.file);
    process.send({ kind: "heap-stop" });
  } else if (m?.kind === "profile-stop") {
    const { profile } = await session.post("Profiler.stop");
    writeFileSync(m.file, JSON.stringify(profile));
    session.disconnect();
    process.send({ kind: "profile-stop" });
  }
});
// The IPC channel must not keep the server up once it stops.
process.channel?.unref();
