/**
 * What one MeshStore Durable Object holds, measured on workerd: the real Worker (wrangler.toml,
 * functions/workers/index.ts) started offline with wrangler's unstable_dev (miniflare + workerd, a
 * fresh SQLite storage per run), a mesh of N Services + N EndpointSlices × 10 endpoints posted to
 * /v1/events in NDJSON batches of 500 events (as the relay sends them), published by the object's
 * alarm (the debounce flush) in one of two ways:
 * - `per-batch`: PILOT_DEBOUNCE_AFTER=100ms, and each batch's push is awaited before the next batch
 *   goes: the relay's steady state, one flush per batch;
 * - `one-flush`: the whole mesh is queued first and published by ONE flush (a cold start, or a
 *   relist after the debounce held everything).
 * Per run: workerd's RSS (/proc/<pid>/status VmRSS, sampled every 50 ms while a flush runs, and
 * VmHWM, the process peak), the isolate's V8 heap (the inspector's Runtime.getHeapUsage: the Worker
 * and the object share one isolate, and the 128 MB limit is about it), workerd's CPU time
 * (/proc/<pid>/stat) per ingest batch and per flush alarm (what the 30 s CPU limit per invocation
 * counts), the largest stored value (a Durable Object row holds at most 2 MB) and what failed.
 * Local workerd enforces neither the memory nor the CPU limit, but its SQLite refuses rows over 2 MB
 * as the deployed one does.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stripVTControlCharacters } from "node:util";
import { unstable_dev } from "wrangler";
import { type BenchWatch, openWholeMeshWatch } from "./capacity-watch.ts";
import { meshEvents } from "./ingest-throughput.ts";
import {
  captureLog,
  cpuMs,
  inspector,
  sqliteFacts,
  statusMb,
  stayOffline,
  workerdChildren,
} from "./workerd-probe.ts";

const token = "capacity-bench-token";
const xdsToken = "capacity-bench-xds-token";

/** How the mesh is published: one flush per batch, or one flush of everything at the end. */
export type CapacityMode = "per-batch" | "per-batch+watch" | "one-flush";

/** One run's figures. Times and CPU in ms, memory in MB. */
export interface CapacityRow {
  mode: CapacityMode;
  services: number;
  events: number;
  batches: number;
  /** One ingest POST: median and largest wall time, median and largest workerd CPU. */
  batchMedianMs: number;
  batchMaxMs: number;
  batchCpuMedianMs: number;
  batchCpuMaxMs: number;
  /** Flush alarms that published: largest wall time (due time to push log line) and CPU. */
  flushes: number;
  flushMaxMs: number;
  flushCpuMaxMs: number;
  /** Resources the pushes changed, summed. */
  changed: number;
  /** workerd RSS: at start, after loading and publishing, the largest sample, the process peak. */
  rssStartMb: number;
  rssEndMb: number;
  rssMaxMb: number;
  rssPeakMb: number;
  /** Isolate heap used (garbage not collected included): at start, largest sample, at the end; -1: no inspector. */
  heapStartMb: number;
  heapMaxMb: number;
  heapEndMb: number;
  /** Isolate heap committed at the end: near what the largest moment needed (V8 shrinks it late). */
  heapCommittedMb: number;
  /** The object's SQLite files on disk, and its largest value. */
  sqliteMb: number;
  largestValue: { key: string; kb: number };
  /** The push counter and the queued pushes left in the object's storage at the end. */
  pushVersion: number;
  queued: number;
  /** Turns that failed after the first failure was seen, within 5 s (a failed turn retries every 1 s). */
  failedAgain: number;
  /** per-batch+watch: workerd CPU from a batch's answer to the Watch holding its delta (flush + Watch), largest; resources it received. */
  watchCpuMaxMs: number;
  watchResources: number;
  failures: string[];
}

function ndjsonBatches(services: number, batch: number): { body: string; events: number }[] {
  const out: { body: string; events: number }[] = [];
  let lines: string[] = [];
  for (let n = 0; n < services; n++) {
    for (const e of meshEvents(n, 10)) lines.push(JSON.stringify(e));
    if (lines.length >= batch || n === services - 1) {
      out.push({ body: lines.join("\n"), events: lines.length });
      lines = [];
    }
  }
  return out;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

const pushLine = /push \d+: (full|incremental), (\d+) resource\(s\) changed/;
const failedLine = /turn failed/;

/** Loads a mesh of `services` into a fresh MeshStore on workerd, publishing it as `mode` says. */
export async function measureCapacity(
  services: number,
  mode: CapacityMode,
  batch = 500,
): Promise<CapacityRow> {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-capacity-"));
  const inspectorPort = 9300 + Math.floor(Math.random() * 500);
  // one-flush: quiet time longer than any batch, so nothing flushes before the load ends.
  const perBatch = mode !== "one-flush";
  const debounceAfterMs = perBatch ? 100 : 10_000;
  const log = captureLog();
  const failures: string[] = [];
  stayOffline();
  const worker = await unstable_dev("functions/workers/index.ts", {
    config: "wrangler.toml",
    local: true,
    persistTo: dir,
    inspectorPort,
    logLevel: "log",
    vars: {
      EDGEPILOT_TOKEN: token,
      EDGEPILOT_XDS_TOKEN: xdsToken,
      PILOT_SYNC_TIMEOUT: "0s",
      PILOT_DEBOUNCE_AFTER: `${debounceAfterMs}ms`,
      PILOT_DEBOUNCE_MAX: perBatch ? "10s" : "3600s",
    },
    // No file watching: an edit elsewhere in the tree would restart workerd mid-run.
    experimental: { disableExperimentalWarning: true, watch: false },
  });
  let cdp: Awaited<ReturnType<typeof inspector>> | undefined;
  let row: CapacityRow | undefined;
  let watch: BenchWatch | undefined;
  try {
    await (await worker.fetch("/ready")).arrayBuffer();
    const pids = workerdChildren();
    if (pids.length !== 1)
      throw new Error(`expected one workerd for the Worker, found ${pids.join(", ") || "none"}`);
    const pid = pids[0] as number;
    try {
      cdp = await inspector(inspectorPort);
    } catch (err) {
      failures.push(`inspector: ${err}`);
    }
    const heap = async () => (cdp ? await cdp.heapMb().catch(() => -1) : -1);
    const rssStartMb = statusMb(pid, "VmRSS");
    const heapStartMb = await heap();
    let rssMaxMb = rssStartMb;
    let heapMaxMb = heapStartMb;
    const sample = async () => {
      rssMaxMb = Math.max(rssMaxMb, statusMb(pid, "VmRSS"));
      heapMaxMb = Math.max(heapMaxMb, await heap());
    };
    const flushWall: number[] = [];
    const flushCpu: number[] = [];
    let changed = 0;
    let seen = 0;
    /** Waits for the next push line (due `dueAt`); false when a turn failed or none came in 10 minutes. */
    const awaitPush = async (dueAt: number): Promise<boolean> => {
      const cpu0 = cpuMs(pid);
      const deadline = performance.now() + 600_000;
      while (performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        rssMaxMb = Math.max(rssMaxMb, statusMb(pid, "VmRSS"));
        const lines = log.lines.filter((l) => pushLine.test(l.text));
        if (lines.length > seen) {
          const line = lines[seen] as { at: number; text: string };
          seen = lines.length;
          flushWall.push(line.at - dueAt);
          flushCpu.push(cpuMs(pid) - cpu0);
          changed += Number(pushLine.exec(line.text)?.[2] ?? 0);
          await sample();
          return true;
        }
        const failed = log.lines.find((l) => failedLine.test(l.text));
        if (failed) {
          failures.push(`flush: ${stripVTControlCharacters(failed.text).slice(0, 300)}`);
          return false;
        }
      }
      failures.push("flush: no push within 10 minutes");
      return false;
    };
    // per-batch+watch: one whole-mesh EDS Watch, answered by the object after every push.
    if (mode === "per-batch+watch") {
      // Every service's ClusterLoadAssignment, up to EDGEPILOT_MAX_NAMES_PER_REQUEST (10,000).
      const names = Array.from(
        { length: Math.min(services, 10_000) },
        (_, n) => `outbound|9080||svc-${n}.mesh.svc.cluster.local`,
      );
      watch = openWholeMeshWatch(`http://${worker.address}:${worker.port}`, xdsToken, names);
      await new Promise((r) => setTimeout(r, 1000)); // its first answer (nothing yet) is not a push
    }
    const watchCpu: number[] = [];
    let watchSeen = watch?.messages ?? 0;
    /**
     * Waits until the Watch got a message past `seen` (the push's delta) and records the CPU since
     * `cpu0` (the batch's answer: the flush alarm plus the Watch's recompute); false after 60 s or an error.
     */
    const awaitWatch = async (seen: number, cpu0: number): Promise<boolean> => {
      const deadline = performance.now() + 60_000;
      while (performance.now() < deadline && watch && !watch.error) {
        if (watch.messages > seen) {
          watchCpu.push(cpuMs(pid) - cpu0);
          await sample();
          return true;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      failures.push(`watch: ${watch?.error ?? "no delta within 60 s of the push"}`);
      return false;
    };
    const bodies = ndjsonBatches(services, batch);
    const wall: number[] = [];
    const cpu: number[] = [];
    for (const [i, { body }] of bodies.entries()) {
      const cpu0 = cpuMs(pid);
      const t0 = performance.now();
      const res = await worker.fetch("/v1/events", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/x-ndjson" },
        body,
      });
      const text = await res.text();
      const answered = performance.now();
      wall.push(answered - t0);
      const cpuAnswered = cpuMs(pid);
      cpu.push(cpuAnswered - cpu0);
      if (res.status !== 200) {
        failures.push(`batch ${i}: ${res.status} ${text.slice(0, 200)}`);
        break;
      }
      if (perBatch && !(await awaitPush(answered + debounceAfterMs))) break;
      if (watch && !(await awaitWatch(watchSeen, cpuAnswered))) break;
      watchSeen = watch?.messages ?? 0;
    }
    if (mode === "one-flush" && failures.length === 0) {
      if (log.lines.some((l) => pushLine.test(l.text))) failures.push("a flush ran before the load ended");
      await sample();
      await awaitPush(performance.now() + debounceAfterMs);
    }
    // After a failed turn: does the retry fail again, or pass (and what did it leave)?
    let failedAgain = 0;
    if (failures.some((f) => f.startsWith("flush:"))) {
      const before = log.lines.filter((l) => failedLine.test(l.text)).length;
      await new Promise((r) => setTimeout(r, 5000));
      failedAgain = log.lines.filter((l) => failedLine.test(l.text)).length - before;
    }
    row = {
      mode,
      services,
      events: bodies.reduce((s, b) => s + b.events, 0),
      batches: bodies.length,
      batchMedianMs: median(wall),
      batchMaxMs: Math.max(...wall),
      batchCpuMedianMs: median(cpu),
      batchCpuMaxMs: Math.max(...cpu),
      flushes: flushWall.length,
      flushMaxMs: flushWall.length > 0 ? Math.max(...flushWall) : Number.NaN,
      flushCpuMaxMs: flushCpu.length > 0 ? Math.max(...flushCpu) : Number.NaN,
      changed,
      rssStartMb,
      rssEndMb: statusMb(pid, "VmRSS"),
      rssMaxMb,
      rssPeakMb: statusMb(pid, "VmHWM"),
      heapStartMb,
      heapMaxMb,
      heapEndMb: await heap(),
      heapCommittedMb: cdp ? await cdp.committedMb().catch(() => -1) : -1,
      sqliteMb: 0,
      largestValue: { key: "", kb: 0 },
      pushVersion: 0,
      queued: 0,
      failedAgain,
      watchCpuMaxMs: watchCpu.length > 0 ? Math.max(...watchCpu) : Number.NaN,
      watchResources: watch?.resources ?? 0,
      failures,
    };
    return row;
  } finally {
    watch?.close();
    cdp?.close();
    await worker.stop();
    log.stop();
    if (row) Object.assign(row, sqliteFacts(dir));
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const mode = (process.argv[3] ?? "per-batch") as CapacityMode;
  for (const n of (process.argv[2] ?? "1000").split(",").map(Number)) {
    console.log(JSON.stringify(await measureCapacity(n, mode)));
  }
}
