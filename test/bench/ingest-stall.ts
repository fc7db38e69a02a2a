/**
 * The busiest event-loop step while one large ingest call is applied by the real Node runtime
 * (in-process, real HTTP and gRPC): a 5 ms interval timer's largest gap (wall clock, and counted in
 * the main thread's CPU time), perf_hooks' event-loop delay, how often the timer ran meanwhile, and the
 * slowest of the `/ready` and `FetchClusters` calls answered meanwhile. The debounce is set long so
 * the figures are ingest's own (a flush is the debounce function's work). The body is encoded before
 * the clock starts and sent as bytes, so the client's own work is not counted as the server's.
 *
 * Cases: `events` (a JSON array of watch events), `ndjson` (the same events, one per line) and
 * `resync` (a PodList of n Pods to /v1/resync over a runtime that first took the n-event batch, unmeasured).
 */
import { request } from "node:http";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startNodeRuntime } from "../../functions/node/runtime.ts";
import { parseConfig } from "../../lib/config.ts";
import { ClusterDiscoveryService } from "../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { DiscoveryRequestSchema } from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { defaultSliceMs } from "../../lib/pace.ts";
import { asStarted, runAsStarted } from "./as-started.ts";
import { serviceEvents } from "./mesh.ts";

/** What one measured call sends. */
export interface IngestCall {
  path: string;
  contentType: string;
  body: Uint8Array;
  /** Events, or list items. */
  items: number;
}

type WatchObject = { kind: string; metadata: Record<string, unknown>; spec?: unknown; status?: unknown };

/** A Pod trimmed to what endpoints read, so 100k events fit the 32 MiB body limit. */
function trimPod(object: WatchObject): WatchObject {
  const { name, namespace, resourceVersion } = object.metadata;
  return {
    kind: object.kind,
    metadata: { name, namespace, resourceVersion },
    status: { podIP: (object.status as { podIP: string }).podIP },
  };
}

/**
 * `n` watch events: whole services (3 Pods, a Service, an EndpointSlice each), the Pods trimmed;
 * as one JSON array, or NDJSON (one event a line).
 */
export function eventsCall(n: number, format: "json" | "ndjson" = "json"): IngestCall {
  const events: { type: string; object: WatchObject }[] = [];
  for (let s = 0; events.length < n; s++) events.push(...(serviceEvents(s) as typeof events));
  const batch = events
    .slice(0, n)
    .map((e) => (e.object.kind === "Pod" ? { ...e, object: { apiVersion: "v1", ...trimPod(e.object) } } : e));
  const text =
    format === "json" ? JSON.stringify(batch) : `${batch.map((e) => JSON.stringify(e)).join("\n")}\n`;
  return {
    path: "/v1/events",
    contentType: format === "json" ? "application/json" : "application/x-ndjson",
    body: Buffer.from(text),
    items: n,
  };
}

/**
 * A PodList of `n` Pods (trimmed, newer resourceVersions) sent after `eventsCall(prepared)`: every
 * tenth service's Pods of that batch are missing (the resync deletes them), the rest are listed
 * again, and Pods of services the batch did not hold make up the count.
 */
export function resyncCall(n: number, prepared: number): IngestCall {
  const preparedServices = Math.ceil(prepared / 5);
  const items: WatchObject[] = [];
  for (let s = 0; items.length < n; s++) {
    const pods = (serviceEvents(s) as { object: WatchObject }[]).filter((e) => e.object.kind === "Pod");
    if (s < preparedServices && s % 10 === 0) continue;
    for (const { object } of pods) if (items.length < n) items.push(trimPod(object));
  }
  const newest = Math.max(...items.map((o) => Number(o.metadata.resourceVersion)));
  const list = {
    apiVersion: "v1",
    kind: "PodList",
    metadata: { resourceVersion: String(newest + 1) },
    items,
  };
  return {
    path: "/v1/resync?kind=Pod",
    contentType: "application/json",
    body: Buffer.from(JSON.stringify(list)),
    items: n,
  };
}

export interface StallReport {
  items: number;
  bodyBytes: number;
  status: number;
  ingestMs: number;
  /** The pace's slice: the longest run of ingest work between two yields. */
  sliceMs: number;
  /** Largest gap between two ticks of a 5 ms interval timer, minus the 5 ms (wall clock). */
  maxStallMs: number;
  /**
   * The busiest step: the same gap counted in the main thread's CPU time (on a loaded machine a
   * wall-clock gap also holds the time the thread waited for a core, or for the garbage
   * collector's helper threads to get one; this is the part the loop itself ran).
   */
  maxBusyStallMs: number;
  /** perf_hooks monitorEventLoopDelay maximum (ms). */
  maxDelayMs: number;
  /** When the whole body had been sent (ms after the call started); what follows is the server's decoding and applying. */
  sentMs: number;
  /** Times the 5 ms timer ran after the body was sent and before the answer: the loop turned that often at least. */
  ticks: number;
  /** `/ready` calls answered 200 after the body was sent and before the answer, the slowest, and answers that were not 200 (any time). */
  readyProbes: number;
  readyMaxMs: number;
  readyFailures: number;
  /** `FetchClusters` calls answered after the body was sent and before the answer, the slowest, and calls that failed (any time). */
  fetchProbes: number;
  fetchMaxMs: number;
  fetchFailures: number;
}

/**
 * Posts `body` with node:http (bytes as they are, nothing encoded on this loop); resolves with the
 * status. `onSent` is called once the whole body was handed to the socket.
 */
function post(port: number, call: IngestCall, onSent?: () => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path: call.path,
        headers: { "content-type": call.contentType, "content-length": call.body.byteLength },
      },
      (res) => {
        res.on("data", () => {});
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (onSent) req.on("finish", onSent);
    req.end(call.body);
  });
}

/** Starts a fresh runtime, posts `before` (unmeasured) if given, then measures the loop while `call` is applied. */
export async function measureIngestStall(call: IngestCall, before?: IngestCall): Promise<StallReport> {
  const parsed = parseConfig({
    PORT: "0",
    XDS_PORT: "0",
    HOST: "127.0.0.1",
    PILOT_DEBOUNCE_AFTER: "10m",
    PILOT_DEBOUNCE_MAX: "10m",
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const runtime = await startNodeRuntime(parsed.config, { log: () => {}, shutdownGraceMs: 100 });
  const base = `http://127.0.0.1:${runtime.port}`;
  const cds = createClient(
    ClusterDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${runtime.xdsPort}` }),
  );
  const fetchClusters = () =>
    cds.fetchClusters(
      create(DiscoveryRequestSchema, {
        node: {
          id: "sidecar~10.0.0.1~bench.default~default.svc.cluster.local",
          metadata: { GENERATOR: "grpc" },
        },
      }),
    );
  if (before && (await post(runtime.port, before)) !== 200) throw new Error("the prepared batch failed");
  await fetchClusters(); // connect once before measuring
  let running = true;
  /** Set once the body was sent: ticks and probes are counted from then on, while the server alone works. */
  let sent = false;
  let last = performance.now();
  let lastCpu = process.threadCpuUsage();
  let maxStallMs = 0;
  let maxBusyStallMs = 0;
  let ticks = 0;
  const ticker = setInterval(() => {
    const t = performance.now();
    const cpu = process.threadCpuUsage(lastCpu);
    const gap = t - last - 5;
    maxStallMs = Math.max(maxStallMs, gap);
    maxBusyStallMs = Math.max(maxBusyStallMs, Math.min(gap, (cpu.user + cpu.system) / 1000 - 5));
    if (sent && running) ticks++;
    last = t;
    lastCpu = process.threadCpuUsage();
  }, 5);
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  const probe = async (call: () => Promise<boolean>) => {
    let count = 0;
    let failures = 0;
    let max = 0;
    while (running) {
      const t = performance.now();
      const ok = await call().catch(() => false);
      max = Math.max(max, performance.now() - t);
      if (!ok) failures++;
      else if (sent && running) count++;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { count, failures, max };
  };
  histogram.enable();
  const started = performance.now();
  const ready = probe(async () => {
    const res = await fetch(`${base}/ready`);
    await res.arrayBuffer();
    return res.ok;
  });
  const fetched = probe(() => fetchClusters().then(() => true));
  let sentMs = 0;
  const status = await post(runtime.port, call, () => {
    sent = true;
    sentMs = performance.now() - started;
  });
  const ingestMs = performance.now() - started;
  running = false;
  const [r, f] = await Promise.all([ready, fetched]);
  histogram.disable();
  clearInterval(ticker);
  await runtime.stop();
  return {
    items: call.items,
    bodyBytes: call.body.byteLength,
    status,
    ingestMs,
    sliceMs: defaultSliceMs,
    maxStallMs,
    maxBusyStallMs,
    maxDelayMs: histogram.max / 1e6,
    sentMs,
    ticks,
    readyProbes: r.count,
    readyMaxMs: r.max,
    readyFailures: r.failures,
    fetchProbes: f.count,
    fetchMaxMs: f.max,
    fetchFailures: f.failures,
  };
}

/** The measured cases at `n` items: what is posted, and the batch posted first (unmeasured). */
export const stallCases = {
  events: (n: number) => ({ call: eventsCall(n, "json") }),
  ndjson: (n: number) => ({ call: eventsCall(n, "ndjson") }),
  resync: (n: number) => {
    // The batch first: its resourceVersions are older than the list's.
    const before = eventsCall(n, "json");
    return { before, call: resyncCall(n, n) };
  },
} as const;

/** A case name of `stallCases`. */
export type StallCase = keyof typeof stallCases;

/** Measures one case in this process. */
export function measureStallCase(which: StallCase, n: number): Promise<StallReport> {
  const { call, before } = stallCases[which](n) as { call: IngestCall; before?: IngestCall };
  return measureIngestStall(call, before);
}

/**
 * One case's stall as `npm start` runs the server (as-started.ts: compiled, its node flags and
 * environment, in a child process; the young generation's size bounds each scavenge's pause).
 * INGEST_BENCH_IN_PROCESS=1 measures in this process.
 */
export async function measureIngestStallAsStarted(which: StallCase, n: number): Promise<StallReport> {
  if (asStarted || process.env.INGEST_BENCH_IN_PROCESS === "1") return measureStallCase(which, n);
  return JSON.parse(runAsStarted("ingest-stall", [which, String(n)])) as StallReport;
}

const pad = (v: string | number, n: number) => String(v).padStart(n);

/** `npm run bench`'s section: every case at `n` items, as started, one row each. */
export async function printIngestStall(n: number): Promise<void> {
  console.log(
    "\nthe busiest event-loop step while one large ingest call is applied (Node runtime run as npm start runs it, memory" +
      " store; a 5 ms timer, /ready and FetchClusters probed meanwhile; busiest step = the timer's largest gap in this" +
      " main thread's CPU time; resync: a PodList after the batch of as many events; test/bench/ingest-stall.ts)",
  );
  console.log(
    "call            |   items | body MB | ingest s | busiest step ms | pace slice ms | max gap ms (wall) | timer ticks | /ready max ms (n) | FetchClusters max ms (n)",
  );
  for (const [which, what] of [
    ["events", "events, JSON"],
    ["ndjson", "events, NDJSON"],
    ["resync", "resync, PodList"],
  ] as const) {
    const r = await measureIngestStallAsStarted(which, n);
    console.log(
      `${what.padEnd(15)} | ${pad(n, 7)} | ${pad((r.bodyBytes / 1e6).toFixed(1), 7)} | ${pad((r.ingestMs / 1000).toFixed(1), 8)} | ${pad(r.maxBusyStallMs.toFixed(0), 15)} | ${pad(r.sliceMs, 13)} | ${pad(r.maxStallMs.toFixed(0), 17)} | ${pad(r.ticks, 11)} | ${pad(`${r.readyMaxMs.toFixed(0)} (${r.readyProbes})`, 17)} | ${pad(`${r.fetchMaxMs.toFixed(0)} (${r.fetchProbes})`, 24)}`,
    );
  }
}

// `ingest-stall.ts [n]` prints the section; `ingest-stall.ts <case> [n]` one case's report as JSON.
if (import.meta.url === `file://${process.argv[1]}`) {
  const [first = "100000", second] = process.argv.slice(2);
  if (/^\d+$/.test(first)) await printIngestStall(Number(first));
  else if (first in stallCases)
    console.log(
      JSON.stringify(await measureIngestStallAsStarted(first as StallCase, Number(second ?? 100_000))),
    );
  else
    throw new Error(`usage: ingest-stall.ts [n] | ingest-stall.ts ${Object.keys(stallCases).join("|")} [n]`);
}
