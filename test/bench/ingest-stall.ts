/**
 * The largest event-loop stall while one large batch is ingested by the real Node runtime
 * (in-process, real HTTP and gRPC): a 5 ms interval timer's largest gap and perf_hooks'
 * event-loop delay, plus the slowest `/ready` and `FetchClusters` answered meanwhile. The debounce
 * is set long so the number is ingest's own (a flush is the debounce function's work).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startNodeRuntime } from "../../functions/node/runtime.ts";
import { parseConfig } from "../../lib/config.ts";
import { ClusterDiscoveryService } from "../../lib/gen/envoy/service/cluster/v3/cds_pb.ts";
import { DiscoveryRequestSchema } from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { asStarted, runAsStarted } from "./as-started.ts";
import { serviceEvents } from "./mesh.ts";

/**
 * `n` watch events as one JSON array: whole services (3 Pods, a Service, an EndpointSlice each),
 * the Pods trimmed to what endpoints read so 100k events fit the 32 MiB body limit.
 */
export function largeBatch(n: number): string {
  const events: {
    object: { kind: string; metadata: Record<string, unknown>; spec?: unknown; status?: unknown };
  }[] = [];
  for (let s = 0; events.length < n; s++) events.push(...(serviceEvents(s) as typeof events));
  for (const { object } of events) {
    if (object.kind !== "Pod") continue;
    const { name, namespace, resourceVersion } = object.metadata;
    object.metadata = { name, namespace, resourceVersion };
    object.spec = undefined;
    object.status = { podIP: (object.status as { podIP: string }).podIP };
  }
  return JSON.stringify(events.slice(0, n));
}

export interface StallReport {
  events: number;
  bodyBytes: number;
  status: number;
  ingestMs: number;
  /** Largest gap between two ticks of a 5 ms interval timer, minus the 5 ms (wall clock). */
  maxStallMs: number;
  /**
   * The same gap counted in this process's CPU time: on a shared, loaded machine a wall-clock gap
   * also holds the time the process waited for a core; this is the part it spent running.
   */
  maxBusyStallMs: number;
  /** perf_hooks monitorEventLoopDelay maximum (ms). */
  maxDelayMs: number;
  readyProbes: number;
  readyMaxMs: number;
  fetchProbes: number;
  fetchMaxMs: number;
}

/** Posts `body` to a fresh runtime's /v1/events and measures the loop while it is applied. */
export async function measureIngestStall(body: string, events: number): Promise<StallReport> {
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
  await fetchClusters(); // connect once before measuring
  let running = true;
  let last = performance.now();
  let lastCpu = process.cpuUsage();
  let maxStallMs = 0;
  let maxBusyStallMs = 0;
  const ticker = setInterval(() => {
    const t = performance.now();
    const cpu = process.cpuUsage(lastCpu);
    const gap = t - last - 5;
    maxStallMs = Math.max(maxStallMs, gap);
    maxBusyStallMs = Math.max(maxBusyStallMs, Math.min(gap, (cpu.user + cpu.system) / 1000 - 5));
    last = t;
    lastCpu = process.cpuUsage();
  }, 5);
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  const probe = async (call: () => Promise<unknown>) => {
    let count = 0;
    let max = 0;
    while (running) {
      const t = performance.now();
      await call();
      max = Math.max(max, performance.now() - t);
      count++;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { count, max };
  };
  histogram.enable();
  const started = performance.now();
  const ready = probe(() => fetch(`${base}/ready`).then((r) => r.arrayBuffer()));
  const fetched = probe(fetchClusters);
  const res = await fetch(`${base}/v1/events`, {
    method: "POST",
    body,
    headers: { "content-type": "application/json" },
  });
  await res.arrayBuffer();
  const ingestMs = performance.now() - started;
  running = false;
  const [r, f] = await Promise.all([ready, fetched]);
  histogram.disable();
  clearInterval(ticker);
  await runtime.stop();
  return {
    events,
    bodyBytes: body.length,
    status: res.status,
    ingestMs,
    maxStallMs,
    maxBusyStallMs,
    maxDelayMs: histogram.max / 1e6,
    readyProbes: r.count,
    readyMaxMs: r.max,
    fetchProbes: f.count,
    fetchMaxMs: f.max,
  };
}

/**
 * The stall of an `n`-event batch as `npm start` runs the server (as-started.ts: compiled, its node
 * flags and environment, in a child process; the young generation's size bounds each scavenge's
 * pause). INGEST_BENCH_IN_PROCESS=1 measures in this process.
 */
export async function measureIngestStallAsStarted(n: number): Promise<StallReport> {
  if (asStarted || process.env.INGEST_BENCH_IN_PROCESS === "1") return measureIngestStall(largeBatch(n), n);
  return JSON.parse(runAsStarted("ingest-stall", [String(n)])) as StallReport;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureIngestStallAsStarted(Number(process.argv[2] ?? 100_000))));
}
