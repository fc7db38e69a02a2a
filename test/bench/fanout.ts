/**
 * Fan-out: how fast one endpoint change reaches many Delta ADS streams, and what each costs.
 * Real Node runtime in-process (real ingest HTTP, real h2c gRPC); the streams are real
 * connect-node gRPC clients in the same process, so the CPU per stream per push also holds the
 * client's decode and ACK. EDS debounce off (PILOT_ENABLE_EDS_DEBOUNCE=false), so the push follows
 * the POST at once.
 */
import { setMaxListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { startNodeRuntime } from "../../functions/node/runtime.ts";
import { parseConfig } from "../../lib/config.ts";
import { AggregatedDiscoveryService } from "../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../lib/xds/types.ts";
import { hostOf, serviceEvents, sliceEvent } from "./mesh.ts";

export interface FanoutReport {
  streams: number;
  p50Ms: number;
  p99Ms: number;
  /** Process CPU (server and in-process clients) per stream per push, in µs. */
  cpuPerStreamUs: number;
  /** Median ingest POST latency of the changes (ms). */
  postMs: number;
}

const clusterOf = (n: number) => `outbound|9080||${hostOf(n)}`;

/** A request queue a bidi stream reads from. */
function requestQueue() {
  const items: DeltaDiscoveryRequest[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  return {
    push(r: DeltaDiscoveryRequest) {
      items.push(r);
      wake?.();
    },
    end() {
      done = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      while (true) {
        const r = items.shift();
        if (r) {
          yield r;
          continue;
        }
        if (done) return;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    },
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length * p) / 100))] as number;
}

/**
 * `streams` Delta streams, each subscribed to the EDS of 3 of `services` services (one of them the
 * target), then `changes` endpoint changes of the target, one at a time.
 */
export async function measureFanout(streams: number, services = 100, changes = 20): Promise<FanoutReport> {
  const parsed = parseConfig({
    PORT: "0",
    XDS_PORT: "0",
    HOST: "127.0.0.1",
    PILOT_ENABLE_EDS_DEBOUNCE: "false",
    EDGEPILOT_MAX_STREAMS_PER_CONNECTION: "2000",
    PILOT_MAX_REQUESTS_PER_SECOND: "100000",
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  const runtime = await startNodeRuntime(parsed.config, { log: () => {}, shutdownGraceMs: 100 });
  const post = async (events: unknown[]) => {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${runtime.port}/v1/events`, {
      method: "POST",
      body: JSON.stringify(events),
      headers: { "content-type": "application/json" },
    });
    await res.arrayBuffer();
    if (res.status >= 300) throw new Error(`ingest answered ${res.status}`);
    return performance.now() - t;
  };
  const batch: unknown[] = [];
  for (let n = 0; n < services; n++) batch.push(...serviceEvents(n));
  await post(batch);
  const target = 0;
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${runtime.xdsPort}` });
  const ads = createClient(AggregatedDiscoveryService, transport);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  // Per change: the instant each stream first saw the target's new version.
  let expect = -1;
  let seen = 0;
  let allSeen: (() => void) | undefined;
  const initial: Promise<void>[] = [];
  const queues: ReturnType<typeof requestQueue>[] = [];
  for (let s = 0; s < streams; s++) {
    const q = requestQueue();
    queues.push(q);
    const others = [1 + (s % (services - 1)), 1 + ((s + 7) % (services - 1))];
    q.push(
      create(DeltaDiscoveryRequestSchema, {
        node: { id: `sidecar~10.1.${s >> 8}.${s & 255}~p${s}.bench~bench.svc.cluster.local` },
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: [target, ...others].map(clusterOf),
      }),
    );
    let first: (() => void) | undefined;
    initial.push(
      new Promise<void>((r) => {
        first = r;
      }),
    );
    let lastChange = -1;
    void (async () => {
      try {
        for await (const res of ads.deltaAggregatedResources(q, { signal: abort.signal })) {
          q.push(create(DeltaDiscoveryRequestSchema, { typeUrl: res.typeUrl, responseNonce: res.nonce }));
          first?.();
          first = undefined;
          if (
            expect >= 0 &&
            lastChange !== expect &&
            res.resources.some((r) => r.name === clusterOf(target))
          ) {
            lastChange = expect;
            if (++seen === streams) allSeen?.();
          }
        }
      } catch {
        // aborted at the end
      }
    })();
  }
  await Promise.all(initial);
  const latencies: number[] = [];
  const posts: number[] = [];
  const cpuStart = process.cpuUsage();
  for (let c = 0; c < changes; c++) {
    seen = 0;
    expect = c;
    const all = new Promise<void>((r) => {
      allSeen = r;
      if (streams === 0) r();
    });
    const t = performance.now();
    const ips = [`10.250.${c % 250}.1`, `10.250.${c % 250}.2`];
    posts.push(await post([sliceEvent(target, ips, "MODIFIED")]));
    await all;
    latencies.push(performance.now() - t);
    // Let the ACKs land before the next change.
    await new Promise((r) => setTimeout(r, 20));
  }
  const cpu = process.cpuUsage(cpuStart);
  abort.abort();
  for (const q of queues) q.end();
  await runtime.stop();
  return {
    streams,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    cpuPerStreamUs: (cpu.user + cpu.system) / streams / changes,
    postMs: percentile(posts, 50),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const n of (process.argv[2] ?? "100,1000").split(",").map(Number)) {
    console.log(JSON.stringify(await measureFanout(n)));
  }
}
