/**
 * What one MeshStore Durable Object holds, measured on workerd: the real Worker (wrangler.toml,
 * functions/workers/index.ts) started offline with wrangler's unstable_dev (miniflare + workerd, a
 * fresh SQLite storage per size), a mesh of N Services + N EndpointSlices × 10 endpoints posted to
 * /v1/events in NDJSON batches (as the relay sends them), then the alarm's debounce flush publishing
 * it. Per size: workerd's RSS (/proc/<pid>/status VmRSS, sampled, and VmHWM: the process peak), the
 * isolate's V8 heap (the inspector's Runtime.getHeapUsage, the figure the 128 MB limit is about; it
 * holds the Worker and the object, one isolate), workerd's CPU time (/proc/<pid>/stat) per ingest
 * batch and for the flush alarm (what the 30 s per-invocation CPU limit counts), and what failed.
 * Local workerd enforces neither limit: the figures say where a deployed object would stop.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_dev } from "wrangler";
import { meshEvents } from "./ingest-throughput.ts";

const token = "capacity-bench-token";
/** Quiet time before the flush: long enough that batches sent back to back never flush mid-load. */
const debounceAfterMs = 10_000;

/** One size's figures. */
export interface CapacityRow {
  services: number;
  events: number;
  batches: number;
  /** Median and largest wall time of one ingest POST (ms). */
  batchMedianMs: number;
  batchMaxMs: number;
  /** workerd CPU per batch, median and largest (ms). */
  batchCpuMedianMs: number;
  batchCpuMaxMs: number;
  /** The flush alarm: wall time (from its due time to its push log line) and workerd CPU (ms). */
  flushMs: number;
  flushCpuMs: number;
  /** Resources the flush changed (its push log line). */
  changed: number;
  /** workerd RSS: before loading, after loading, largest sampled during the flush, process peak (MB). */
  rssStartMb: number;
  rssLoadedMb: number;
  rssFlushMaxMb: number;
  rssPeakMb: number;
  /**
   * Isolate V8 heap used (MB; garbage not yet collected included): at start, after loading, the
   * largest sample during the flush, after it; -1 when the inspector is unavailable.
   */
  heapStartMb: number;
  heapLoadedMb: number;
  heapFlushMaxMb: number;
  heapFlushedMb: number;
  /** Isolate heap committed after the flush (MB): close to what the flush's peak needed. */
  heapCommittedMb: number;
  /** SQLite database size on disk after the flush (MB). */
  sqliteMb: number;
  failures: string[];
}

/** The Worker's workerd process(es) started by this process (miniflare spawns workerd as a direct child). */
function workerdChildren(): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) !== process.pid || !stat.includes("(workerd)")) continue;
      // wrangler runs two: its dev proxy, and the Worker's runtime (the one with an inspector).
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes("--inspector-addr")) out.push(Number(name));
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

const statusMb = (pid: number, field: "VmRSS" | "VmHWM") => {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : Number.NaN;
};

/** utime + stime of the process (ms); clock ticks are 100 Hz on Linux. */
const cpuMs = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
};

interface WsLike {
  on(event: "open" | "message" | "error", f: (data: unknown) => void): void;
  send(text: string): void;
  close(): void;
}

/** A Chrome DevTools Protocol session on the worker's isolate, through wrangler's inspector proxy. */
async function inspector(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error("no inspector target");
  // ws comes with miniflare (wrangler's local runtime), resolved through it.
  const require = createRequire(createRequire(import.meta.url).resolve("miniflare"));
  const WebSocket = require("ws") as new (url: string, options: object) => WsLike;
  const ws = new WebSocket(url, { headers: { origin: "https://devtools.devprod.cloudflare.dev" } });
  await new Promise<void>((resolve, reject) => {
    ws.on("open", () => resolve());
    ws.on("error", reject);
  });
  let id = 0;
  const waiting = new Map<number, (r: unknown) => void>();
  ws.on("message", (data) => {
    const msg = JSON.parse(String(data)) as { id?: number; result?: unknown };
    if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
  });
  const call = (method: string, params: object = {}) =>
    new Promise<unknown>((resolve, reject) => {
      const n = ++id;
      const timer = setTimeout(() => reject(new Error(`inspector: ${method} unanswered after 30s`)), 30_000);
      waiting.set(n, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      ws.send(JSON.stringify({ id: n, method, params }));
    });
  // Nothing is answered before Runtime.enable (workerd does not implement HeapProfiler.collectGarbage).
  await call("Runtime.enable");
  // workerd does not answer HeapProfiler.collectGarbage: heap figures include uncollected garbage.
  return {
    /** V8 heap in use, garbage not yet collected included (MB). */
    async heapMb(): Promise<number> {
      const r = (await call("Runtime.getHeapUsage")) as { usedSize: number };
      return r.usedSize / 1024 / 1024;
    },
    /** V8 heap committed (MB): it grows to what the largest moment needed and shrinks late. */
    async committedMb(): Promise<number> {
      const r = (await call("Runtime.getHeapUsage")) as { totalSize: number };
      return r.totalSize / 1024 / 1024;
    },
    close: () => ws.close(),
  };
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

/** Worker log lines (wrangler writes the worker's console to this process's stdout and stderr). */
function captureLog(): { lines: { at: number; text: string }[]; stop(): void } {
  const lines: { at: number; text: string }[] = [];
  const streams = [process.stdout, process.stderr];
  const writes = streams.map((s) => s.write.bind(s));
  streams.forEach((stream, i) => {
    stream.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
      const at = performance.now();
      for (const line of text.split("\n")) if (line.trim()) lines.push({ at, text: line });
      if (process.env.CAPACITY_VERBOSE)
        return (writes[i] as (c: unknown, ...r: unknown[]) => boolean)(chunk, ...rest);
      return true;
    }) as typeof stream.write;
  });
  return {
    lines,
    stop: () => {
      streams.forEach((stream, i) => {
        stream.write = writes[i] as typeof stream.write;
      });
    },
  };
}

/** Loads a mesh of `services` into a fresh MeshStore on workerd and flushes it. */
export async function measureCapacity(services: number, batch = 500): Promise<CapacityRow> {
  const dir = mkdtempSync(join(tmpdir(), "edgepilot-capacity-"));
  const inspectorPort = 9300 + Math.floor(Math.random() * 500);
  const log = captureLog();
  const failures: string[] = [];
  const worker = await unstable_dev("functions/workers/index.ts", {
    config: "wrangler.toml",
    local: true,
    persistTo: dir,
    inspectorPort,
    logLevel: "log",
    vars: {
      EDGEPILOT_TOKEN: token,
      EDGEPILOT_XDS_TOKEN: "capacity-bench-xds-token",
      PILOT_SYNC_TIMEOUT: "0s",
      PILOT_DEBOUNCE_AFTER: `${debounceAfterMs}ms`,
      PILOT_DEBOUNCE_MAX: "3600s",
    },
    experimental: { disableExperimentalWarning: true, testMode: true },
  });
  let cdp: Awaited<ReturnType<typeof inspector>> | undefined;
  try {
    const heap = async () => (cdp ? await cdp.heapMb() : -1);
    const ready = await worker.fetch("/ready");
    await ready.arrayBuffer();
    const pids = workerdChildren();
    if (pids.length !== 1)
      throw new Error(`expected one workerd for the Worker, found ${pids.join(", ") || "none"}`);
    const pid = pids[0] as number;
    try {
      cdp = await inspector(inspectorPort);
    } catch (err) {
      failures.push(`inspector: ${err}`);
    }
    const rssStartMb = statusMb(pid, "VmRSS");
    const heapStartMb = await heap();
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
      wall.push(performance.now() - t0);
      cpu.push(cpuMs(pid) - cpu0);
      if (res.status !== 200) {
        failures.push(`batch ${i}: ${res.status} ${text.slice(0, 200)}`);
        break;
      }
    }
    console.error(`loaded ${bodies.length} batches, failures ${failures.length}\n`);
    const loadedAt = performance.now();
    const early = log.lines.filter((l) => /push \d+:/.test(l.text));
    if (early.length > 0)
      failures.push(`flushed before the load ended: ${early.map((l) => l.text).join("; ")}`);
    const cpuLoaded = cpuMs(pid);
    const rssLoadedMb = statusMb(pid, "VmRSS");
    const heapLoadedMb = await heap();
    // Heap samples while the flush runs (answered only between the isolate's tasks: a lower bound on its peak).
    let heapFlushMaxMb = heapLoadedMb;
    let sampling = false;
    const sampler = setInterval(() => {
      if (sampling || !cdp) return;
      sampling = true;
      void heap()
        .then((mb) => {
          heapFlushMaxMb = Math.max(heapFlushMaxMb, mb);
        })
        .catch(() => undefined)
        .finally(() => {
          sampling = false;
        });
    }, 100);
    // The flush is due debounceAfterMs after the last batch was queued; wait for its push line.
    let rssFlushMaxMb = rssLoadedMb;
    let pushLine: { at: number; text: string } | undefined;
    const deadline = loadedAt + 600_000;
    while (!pushLine && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      rssFlushMaxMb = Math.max(rssFlushMaxMb, statusMb(pid, "VmRSS"));
      pushLine = log.lines.find((l) => l.at >= loadedAt && /push \d+: full/.test(l.text));
      const failed = log.lines.find((l) => /turn failed/.test(l.text));
      if (failed && !pushLine) {
        failures.push(`flush: ${failed.text.slice(0, 300)}`);
        break;
      }
    }
    if (!pushLine && failures.length === 0) failures.push("flush: no push within 10 minutes");
    const flushCpuMs = cpuMs(pid) - cpuLoaded;
    clearInterval(sampler);
    const heapFlushedMb = await heap();
    const heapCommittedMb = cdp ? await cdp.committedMb() : -1;
    const changed = Number(/(\d+) resource\(s\) changed/.exec(pushLine?.text ?? "")?.[1] ?? 0);
    return {
      services,
      events: bodies.reduce((s, b) => s + b.events, 0),
      batches: bodies.length,
      batchMedianMs: median(wall),
      batchMaxMs: Math.max(...wall),
      batchCpuMedianMs: median(cpu),
      batchCpuMaxMs: Math.max(...cpu),
      flushMs: pushLine ? pushLine.at - loadedAt - debounceAfterMs : Number.NaN,
      flushCpuMs,
      changed,
      rssStartMb,
      rssLoadedMb,
      rssFlushMaxMb,
      rssPeakMb: statusMb(pid, "VmHWM"),
      heapStartMb,
      heapLoadedMb,
      heapFlushMaxMb,
      heapFlushedMb,
      heapCommittedMb,
      sqliteMb: sqliteSize(dir),
      failures,
    };
  } finally {
    cdp?.close();
    await worker.stop();
    log.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function sqliteSize(dir: string): number {
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.sqlite/.test(e.name)) bytes += Number(readFileSync(p).length);
    }
  };
  walk(dir);
  return bytes / 1024 / 1024;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const n of (process.argv[2] ?? "1000").split(",").map(Number)) {
    console.log(JSON.stringify(await measureCapacity(n)));
  }
}
