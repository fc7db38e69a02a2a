/**
 * Ingest and publish throughput: batched watch events through the real ingest app
 * in-process (hono's app.request, memory store), the debounce flush timed apart; and a whole mesh
 * (N Services + N EndpointSlices × 10 endpoints) ingested and published beside its encoding floor,
 * measured in the same run: toBinary of every published resource, nothing else.
 */

import { readFileSync } from "node:fs";
import { type DescMessage, fromBinary, type Message, toBinary } from "@bufbuild/protobuf";
import { createIngestApp } from "../../functions/ingest.ts";
import { nodeSha256 } from "../../functions/node/sha256.ts";
import { defaultRegistryOptions, validateEvents } from "../../lib/ingest/index.ts";
import { createRegistry } from "../../lib/metrics/registry.ts";
import { measureStore } from "../../lib/metrics/store-metrics.ts";
import type { Service } from "../../lib/model/index.ts";
import { createPace } from "../../lib/pace.ts";
import { defaultDebounceOptions } from "../../lib/push/debounce.ts";
import { runDebounceTurn } from "../../lib/push/run.ts";
import { generators } from "../../lib/resources/generators/index.ts";
import type { ServiceView, StoredResource } from "../../lib/resources/types.ts";
import { useSyncSha256 } from "../../lib/resources/version.ts";
import { xdsTypes } from "../../lib/resources/xds-types.ts";
import { readShards } from "../../lib/shards/shard-store.ts";
import { listAll } from "../../lib/store/index.ts";
import { keys } from "../../lib/store/keys.ts";
import { createMemoryStore } from "../../lib/store/memory.ts";
import type { Store } from "../../lib/store/store.ts";
import { asStarted, runAsStarted } from "./as-started.ts";

const ns = "mesh";
let revision = 1;

/** A Service with one port, and its EndpointSlice with `endpoints` ready addresses. */
export function meshEvents(n: number, endpoints: number): unknown[] {
  const name = `svc-${n}`;
  const service = {
    type: "ADDED",
    object: {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: ns, resourceVersion: String(++revision) },
      spec: { clusterIP: `10.96.${Math.floor(n / 250)}.${n % 250}`, ports: [{ name: "grpc", port: 9080 }] },
    },
  };
  const slice = {
    type: "ADDED",
    object: {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `${name}-abcde`,
        namespace: ns,
        resourceVersion: String(++revision),
        labels: { "kubernetes.io/service-name": name },
      },
      addressType: "IPv4",
      endpoints: Array.from({ length: endpoints }, (_, i) => ({
        addresses: [`10.${Math.floor(n / 250) % 250}.${n % 250}.${i + 1}`],
        conditions: { ready: true },
      })),
      ports: [{ name: "grpc", port: 9080 }],
    },
  };
  return [service, slice];
}

/** NDJSON bodies of `batch` events each: `services` Services and their slices (meshEvents). */
export function ndjsonBatches(
  services: number,
  endpoints: number,
  batch: number,
): { body: string; events: number }[] {
  const out: { body: string; events: number }[] = [];
  let lines: string[] = [];
  for (let n = 0; n < services; n++) {
    for (const e of meshEvents(n, endpoints)) lines.push(JSON.stringify(e));
    if (lines.length >= batch || n === services - 1) {
      out.push({ body: lines.join("\n"), events: lines.length });
      lines = [];
    }
  }
  return out;
}

export interface ThroughputReport {
  services: number;
  events: number;
  ingestMs: number;
  /** Process CPU time (user + system) while ingesting: steadier than wall time on a shared machine. */
  ingestCpuMs: number;
  /**
   * The main thread's own CPU time while ingesting (Linux; null elsewhere): process CPU also counts
   * V8's GC and compiler threads, which run beside it.
   */
  ingestMainCpuMs: number | null;
  eventsPerSecond: number;
  flushMs: number;
  flushCpuMs: number;
  /** The longest the publish held the event loop: the largest gap of a 5 ms interval timer while it ran. */
  publishMaxStallMs: number;
  resources: number;
  floorMs: number;
  /** (ingest + flush) / floor. */
  ratio: number;
  /** JSON.parse of every NDJSON line ingested, nothing else (best of three). */
  parseFloorMs: number;
  /** JSON.parse plus the whole-batch validation every event must pass before anything is applied (best of three). */
  validateFloorMs: number;
  /** SHA-256 of every published resource's bytes (its content-hash version), nothing else (best of three). */
  hashFloorMs: number;
  /**
   * The generators alone over the finished mesh: every resource built as a message from views
   * already in memory (no store, no encoding; best of three).
   */
  generateFloorMs: number;
  /**
   * What any ingest + publish of this mesh must at least do, measured in the same run: parse and
   * validate every event, build, encode and hash every resource (validateFloorMs +
   * generateFloorMs + floorMs + hashFloorMs).
   */
  workFloorMs: number;
  /** (ingest + flush) / workFloorMs. */
  workRatio: number;
}

/**
 * Ingests `services` Services and their slices (`endpoints` each) in NDJSON batches of `batch`
 * events through the ingest app, then runs one debounce turn (the publish), then measures the floor.
 */
export async function measureThroughput(
  services: number,
  endpoints = 10,
  batch = 500,
): Promise<ThroughputReport> {
  const bench = createBenchIngest();
  const { store } = bench;
  const bodies = ndjsonBatches(services, endpoints, batch);
  const events = bodies.reduce((s, b) => s + b.events, 0);
  const started = performance.now();
  const ingestCpuStarted = cpuMs();
  const mainStarted = mainThreadCpuMs();
  for (const { body } of bodies) await bench.post(body);
  const ingestMs = performance.now() - started;
  const ingestCpuMs = cpuMs() - ingestCpuStarted;
  const mainEnded = mainThreadCpuMs();
  const ingestMainCpuMs = mainStarted === null || mainEnded === null ? null : mainEnded - mainStarted;
  const stall = watchStalls();
  const turn = await bench.turn();
  const publishMaxStallMs = stall.stop();
  if (turn.flushes === 0) throw new Error("no flush ran");
  const { ms: flushMs, cpuMs: flushCpuMs } = turn;
  const { floorMs, resources, hashFloorMs } = await encodingFloor(store);
  const { parseFloorMs, validateFloorMs } = inputFloor(bodies.map((b) => b.body));
  const generateFloorMs = await generateFloor(store);
  const workFloorMs = validateFloorMs + generateFloorMs + floorMs + hashFloorMs;
  return {
    services,
    events,
    ingestMs,
    ingestCpuMs,
    ingestMainCpuMs,
    eventsPerSecond: events / (ingestMs / 1000),
    flushMs,
    flushCpuMs,
    publishMaxStallMs,
    resources,
    floorMs,
    ratio: (ingestMs + flushMs) / floorMs,
    parseFloorMs,
    validateFloorMs,
    hashFloorMs,
    generateFloorMs,
    workFloorMs,
    workRatio: (ingestMs + flushMs) / workFloorMs,
  };
}

/** Watches this event loop with a 5 ms interval timer; stop() says its largest gap (ms) since. */
function watchStalls(): { stop(): number } {
  let last = performance.now();
  let max = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
  }, 5);
  return {
    stop() {
      clearInterval(timer);
      // The gap still open when the watched work ended counts too.
      return Math.max(max, performance.now() - last);
    },
  };
}

/**
 * The input floor of NDJSON `bodies`: JSON.parse of every line alone, and with the validation of
 * each batch (lib/ingest validateEvents), best of three passes each.
 */
export function inputFloor(bodies: readonly string[]): { parseFloorMs: number; validateFloorMs: number } {
  const parse = (body: string) => body.split("\n").map((line) => JSON.parse(line) as unknown);
  const best = (pass: () => void) => {
    let ms = Number.POSITIVE_INFINITY;
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      pass();
      ms = Math.min(ms, performance.now() - started);
    }
    return ms;
  };
  const parseFloorMs = best(() => {
    for (const body of bodies) parse(body);
  });
  const validateFloorMs = best(() => {
    for (const body of bodies)
      if (!validateEvents(parse(body)).ok) throw new Error("bench events are invalid");
  });
  return { parseFloorMs, validateFloorMs };
}

/** This process's CPU time (user + system, every thread), in ms. */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/**
 * The ingest app in-process on a memory store, as the Node runtime runs it (synchronous SHA-256),
 * with a clock the bench moves: `post` an NDJSON body (anything but 200 throws), `turn` one debounce
 * turn once debounceMax passed (the publish), timed.
 */
export function createBenchIngest() {
  useSyncSha256(nodeSha256); // as the Node runtime does
  // BENCH_STORE_METRICS=1: through the measuring decorator (lib/metrics/store-metrics.ts), for its A/B.
  const store = process.env.BENCH_STORE_METRICS
    ? measureStore(createMemoryStore(), createRegistry())
    : createMemoryStore();
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const app = createIngestApp({
    store,
    now,
    registry: defaultRegistryOptions,
    token: undefined,
    allowUnauthenticated: () => true,
    clusterId: "bench",
    log: () => {},
  });
  // Paced as the Node runtime's core paces its flushes (its debounce timer passes a pace to each turn: TurnOptions.pace).
  const flushDeps = {
    store,
    generators,
    context: { domainSuffix: "cluster.local" },
    now,
    pace: createPace(),
  };
  return {
    store,
    async post(body: string): Promise<void> {
      const res = await app.request("/v1/events", {
        method: "POST",
        body,
        headers: { "content-type": "application/x-ndjson" },
      });
      if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    },
    async turn(): Promise<{ ms: number; cpuMs: number; flushes: number; changes: number }> {
      clock += defaultDebounceOptions.debounceMax + 1;
      const wall = performance.now();
      const cpu = cpuMs();
      const result = await runDebounceTurn(flushDeps, defaultDebounceOptions);
      const changes = result.flushes.reduce((n, f) => n + f.changes.length, 0);
      return { ms: performance.now() - wall, cpuMs: cpuMs() - cpu, flushes: result.flushes.length, changes };
    },
  };
}

/**
 * The encoding floor of what `store` publishes: toBinary of every published resource, nothing
 * else, best of three passes (the first warms the encoder up as the publish did); and the hashing
 * floor: SHA-256 of every published body, as the Node runtime versions them.
 */
export async function encodingFloor(
  store: Store,
): Promise<{ floorMs: number; resources: number; hashFloorMs: number }> {
  const messages: (readonly [DescMessage, Message])[] = [];
  const bodies: Uint8Array[] = [];
  for (const { typeUrl, schema } of xdsTypes) {
    for (const e of await listAll<StoredResource>(store, keys.resourcePrefix(typeUrl))) {
      messages.push([schema, fromBinary(schema, e.value.body)]);
      bodies.push(e.value.body);
    }
  }
  let floorMs = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const [schema, message] of messages) toBinary(schema, message);
    floorMs = Math.min(floorMs, performance.now() - started);
  }
  let hashFloorMs = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const body of bodies) nodeSha256(body);
    hashFloorMs = Math.min(hashFloorMs, performance.now() - started);
  }
  return { floorMs, resources: messages.length, hashFloorMs };
}

/**
 * The generators' floor of what `store` holds: each service's view (its records and endpoint
 * shards, as the bench mesh has no Istio config) read first, then every generator run over every
 * view, nothing else, best of three passes.
 */
export async function generateFloor(store: Store): Promise<number> {
  const byHost = new Map<string, Service[]>();
  for (const { value } of await listAll<Service>(store, keys.services())) {
    const id = `${value.namespace}/${value.hostname}`;
    const same = byHost.get(id);
    if (same) same.push(value);
    else byHost.set(id, [value]);
  }
  const views: ServiceView[] = [];
  for (const services of byHost.values()) {
    const { namespace, hostname } = services[0] as Service;
    views.push({ namespace, hostname, services, shards: await readShards(store, namespace, hostname) });
  }
  const context = { domainSuffix: "cluster.local" };
  let ms = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 3; pass++) {
    const started = performance.now();
    for (const view of views) for (const g of generators) g.generate(view, context);
    ms = Math.min(ms, performance.now() - started);
  }
  return ms;
}

/** The main thread's CPU time (user + system, 10 ms ticks) from /proc; null where there is none. */
export function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/**
 * measureThroughput as `npm start` runs the server (see as-started.ts): compiled, under its node
 * flags and environment, in a child process. INGEST_BENCH_IN_PROCESS=1 measures in this process.
 */
export async function measureThroughputAsStarted(services: number): Promise<ThroughputReport> {
  if (asStarted || process.env.INGEST_BENCH_IN_PROCESS === "1") return measureThroughput(services);
  return JSON.parse(runAsStarted("ingest-throughput", [String(services)])) as ThroughputReport;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureThroughputAsStarted(Number(process.argv[2] ?? 1000))));
}
