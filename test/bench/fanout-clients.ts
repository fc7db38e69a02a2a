/**
 * The gRPC side of the fan-out bench, in its own process (forked by fanout.ts with an IPC
 * channel) so the server under test does not share its event loop or CPU with its clients.
 * Opens `streams` real connect-node Delta ADS streams, each subscribed to the EDS of 3 services
 * (one of them the target; argv: xDS port, ingest port, streams, services, namespace), ACKs every response, and reports over IPC:
 * - `{ kind: "ready" }` once every stream has its first answer;
 * - per `{ kind: "post", change, events }` from the parent: POSTs the events to ingest (from this
 *   process, so the POST's client does not wait on the server's event loop), answers
 *   `{ kind: "posted", postMs }`, and `{ kind: "seen", latencyMs }` once every stream has received
 *   the target after the POST, measured from the POST's start on this process's clock.
 * `{ kind: "stop" }` closes every stream and exits.
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
import { hostOf } from "./mesh.ts";

/** Messages the parent sends: `post` is one change's events, POSTed to ingest on `ingestPort`. */
export type ToClients = { kind: "post"; change: number; events: unknown[] } | { kind: "stop" };
/** Messages the clients send back. */
export type FromClients =
  | { kind: "ready" }
  | { kind: "posted"; change: number; postMs: number }
  | { kind: "seen"; change: number; latencyMs: number }
  | { kind: "failed"; message: string };

/** The EDS name of service `n` (namespace `ns`, default mesh.ts's). */
export const clusterOf = (n: number, ns?: string) =>
  `outbound|9080||${ns === undefined ? hostOf(n) : `svc-${n}.${ns}.svc.cluster.local`}`;

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

async function main(port: number, ingestPort: number, streams: number, services: number, ns?: string) {
  const send = (m: FromClients) => process.send?.(m);
  const target = 0;
  const targetName = clusterOf(target, ns);
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
  const ads = createClient(AggregatedDiscoveryService, transport);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  let expect = -1;
  let seen = 0;
  let postedAt = 0;
  let firsts = 0;
  const queues: ReturnType<typeof requestQueue>[] = [];
  for (let s = 0; s < streams; s++) {
    const q = requestQueue();
    queues.push(q);
    const others = [1 + (s % (services - 1)), 1 + ((s + 7) % (services - 1))];
    q.push(
      create(DeltaDiscoveryRequestSchema, {
        node: {
          id: `sidecar~10.1.${s >> 8}.${s & 255}~p${s}.bench~bench.svc.cluster.local`,
          metadata: { GENERATOR: "grpc" },
        },
        typeUrl: TypeUrl.endpoint,
        resourceNamesSubscribe: [target, ...others].map((n) => clusterOf(n, ns)),
      }),
    );
    let first = true;
    let lastChange = -1;
    void (async () => {
      try {
        for await (const res of ads.deltaAggregatedResources(q, { signal: abort.signal })) {
          q.push(create(DeltaDiscoveryRequestSchema, { typeUrl: res.typeUrl, responseNonce: res.nonce }));
          if (first) {
            first = false;
            if (++firsts === streams) send({ kind: "ready" });
          }
          if (expect >= 0 && lastChange !== expect && res.resources.some((r) => r.name === targetName)) {
            lastChange = expect;
            if (++seen === streams)
              send({ kind: "seen", change: expect, latencyMs: performance.now() - postedAt });
          }
        }
      } catch (e) {
        if (!abort.signal.aborted) send({ kind: "failed", message: String(e) });
      }
    })();
  }
  if (streams === 0) send({ kind: "ready" });
  process.on("message", async (m: ToClients) => {
    if (m.kind === "post") {
      expect = m.change;
      seen = 0;
      postedAt = performance.now();
      const res = await fetch(`http://127.0.0.1:${ingestPort}/v1/events`, {
        method: "POST",
        body: JSON.stringify(m.events),
        headers: { "content-type": "application/json" },
      });
      const text = await res.text();
      if (res.status >= 300) send({ kind: "failed", message: `ingest answered ${res.status}: ${text}` });
      send({ kind: "posted", change: m.change, postMs: performance.now() - postedAt });
      if (streams === 0) send({ kind: "seen", change: m.change, latencyMs: 0 });
    } else {
      abort.abort();
      for (const q of queues) q.end();
      process.disconnect?.();
      setTimeout(() => process.exit(0), 200).unref();
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port, ingestPort, streams, services] = process.argv.slice(2, 6).map(Number);
  await main(port as number, ingestPort as number, streams as number, services as number, process.argv[6]);
}
