/**
 * The gRPC side of the agent latency bench (agent-latency.ts), in its own process (forked with an
 * IPC channel) so neither the agent nor the server shares its event loop or CPU with its clients.
 * Holds named groups of real connect-node Delta ADS streams (one HTTP/2 connection per group), each
 * stream subscribed to the EDS of its group's target service and of two services no group targets,
 * ACKing every response. Over IPC:
 * - `{ kind: "open", group, port, streams, target }` ▶ `{ kind: "ready", group }` once every stream
 *   of the group has its first answer (streams open 12 ms apart: the agent admits 100 new local
 *   streams per second, burst 1, as the server does);
 * - `{ kind: "post", group, change, ingestPort, events }` ▶ POSTs the events to ingest (from this
 *   process), then `{ kind: "seen", group, change, latencyMs, postMs }` once every stream of the
 *   group has received its target after the POST, measured from the POST's start;
 * - `{ kind: "close", group }` ▶ `{ kind: "closed", group }`; `{ kind: "stop" }` closes all and exits.
 */
import { setMaxListeners } from "node:events";
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { requestQueue } from "../e2e/support/request-queue.ts";
import { clusterOf } from "./fanout-clients.ts";

/** Services below this index are targets; the others a stream also watches come from above it. */
export const firstUntargeted = 8;

/** Messages the parent sends. */
export type ToAgentClients =
  | { kind: "open"; group: string; port: number; streams: number; target: number; services: number }
  | { kind: "post"; group: string; change: number; ingestPort: number; events: unknown[] }
  | { kind: "close"; group: string }
  | { kind: "stop" };

/** Messages the clients send back. */
export type FromAgentClients =
  | { kind: "ready"; group: string }
  | { kind: "seen"; group: string; change: number; latencyMs: number; postMs: number }
  | { kind: "closed"; group: string }
  | { kind: "failed"; message: string };

const send = (m: FromAgentClients) => process.send?.(m);
const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Group {
  abort: AbortController;
  close(): void;
  /** Starts waiting for change `change` of the target; resolves with the time (performance.now()) every stream had it. */
  expect(change: number): Promise<number>;
}

async function openGroup(port: number, streams: number, target: number, services: number): Promise<Group> {
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
  const ads = createClient(AggregatedDiscoveryService, transport);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  const targetName = clusterOf(target);
  const queues: { close(): void }[] = [];
  let expect = -1;
  let seen = 0;
  let allSeen: ((at: number) => void) | undefined;
  let firsts = 0;
  let allFirst: () => void = () => {};
  const ready = new Promise<void>((r) => {
    allFirst = r;
  });
  const spread = services - firstUntargeted;
  for (let s = 0; s < streams; s++) {
    if (s > 0) await delay(12);
    const q = requestQueue<DeltaDiscoveryRequest>();
    queues.push(q);
    const others = [s % spread, (s + 7) % spread].map((i) => firstUntargeted + i);
    q.push(
      create(DeltaDiscoveryRequestSchema, {
        node: {
          id: `sidecar~10.2.${s >> 8}.${s & 255}~p${s}-${target}.bench~bench.svc.cluster.local`,
          metadata: { GENERATOR: "grpc" },
        },
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: [target, ...others].map((n) => clusterOf(n)),
      }),
    );
    let first = true;
    let lastChange = -1;
    void (async () => {
      try {
        for await (const res of ads.deltaAggregatedResources(q.requests, { signal: abort.signal })) {
          q.push(create(DeltaDiscoveryRequestSchema, { typeUrl: res.typeUrl, responseNonce: res.nonce }));
          if (first) {
            first = false;
            if (++firsts === streams) allFirst();
          }
          if (expect >= 0 && lastChange !== expect && res.resources.some((r) => r.name === targetName)) {
            lastChange = expect;
            if (++seen === streams) allSeen?.(performance.now());
          }
        }
      } catch (e) {
        if (!abort.signal.aborted) send({ kind: "failed", message: String(e) });
      }
    })();
  }
  await ready;
  return {
    abort,
    close() {
      abort.abort();
      for (const q of queues) q.close();
    },
    expect(change) {
      expect = change;
      seen = 0;
      return new Promise<number>((r) => {
        allSeen = r;
      });
    },
  };
}

async function main() {
  const groups = new Map<string, Group>();
  process.on("message", async (m: ToAgentClients) => {
    try {
      if (m.kind === "open") {
        groups.set(m.group, await openGroup(m.port, m.streams, m.target, m.services));
        send({ kind: "ready", group: m.group });
      } else if (m.kind === "post") {
        const group = groups.get(m.group);
        if (!group) throw new Error(`no group ${m.group}`);
        const postedAt = performance.now();
        const seen = group.expect(m.change);
        const res = await fetch(`http://127.0.0.1:${m.ingestPort}/v1/events`, {
          method: "POST",
          body: JSON.stringify(m.events),
          headers: { "content-type": "application/json" },
        });
        const text = await res.text();
        if (res.status >= 300) throw new Error(`ingest answered ${res.status}: ${text.slice(0, 300)}`);
        const postMs = performance.now() - postedAt;
        const at = await seen;
        send({ kind: "seen", group: m.group, change: m.change, latencyMs: at - postedAt, postMs });
      } else if (m.kind === "close") {
        groups.get(m.group)?.close();
        groups.delete(m.group);
        send({ kind: "closed", group: m.group });
      } else {
        for (const g of groups.values()) g.close();
        process.disconnect?.();
        setTimeout(() => process.exit(0), 200).unref();
      }
    } catch (e) {
      send({ kind: "failed", message: String(e) });
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
