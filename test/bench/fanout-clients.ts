/**
 * The gRPC side of the fan-out bench, in its own process (forked by fanout.ts with an IPC
 * channel) so the server under test does not share its event loop or CPU with its clients.
 * Opens `streams` real connect-node Delta ADS streams, each subscribed to the EDS of 3 services
 * (one of them the target), ACKs every response, and reports over IPC:
 * - `{ kind: "ready" }` once every stream has its first answer;
 * - per `{ kind: "expect", change }` from the parent: `{ kind: "armed" }`, then
 *   `{ kind: "seen", change, lastAt }` once every stream has received the target with that
 *   change's endpoints, `lastAt` being the wall instant (performance.timeOrigin + now, the clock
 *   the parent uses too) the last stream got it.
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
import { TypeUrl } from "../../lib/xds/types.ts";
import { hostOf } from "./mesh.ts";

/** Messages the parent sends. */
export type ToClients = { kind: "expect"; change: number } | { kind: "stop" };
/** Messages the clients send back. */
export type FromClients =
  | { kind: "ready" }
  | { kind: "armed"; change: number }
  | { kind: "seen"; change: number; lastAt: number }
  | { kind: "failed"; message: string };

export const clusterOf = (n: number) => `outbound|9080||${hostOf(n)}`;

/** The wall instant now, in ms, comparable across processes. */
export const wallNow = () => performance.timeOrigin + performance.now();

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

async function main(port: number, streams: number, services: number) {
  const send = (m: FromClients) => process.send?.(m);
  const target = 0;
  const targetName = clusterOf(target);
  const transport = createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` });
  const ads = createClient(AggregatedDiscoveryService, transport);
  const abort = new AbortController();
  setMaxListeners(0, abort.signal);
  let expect = -1;
  let seen = 0;
  let lastAt = 0;
  let firsts = 0;
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
            lastAt = wallNow();
            if (++seen === streams) send({ kind: "seen", change: expect, lastAt });
          }
        }
      } catch (e) {
        if (!abort.signal.aborted) send({ kind: "failed", message: String(e) });
      }
    })();
  }
  if (streams === 0) send({ kind: "ready" });
  process.on("message", (m: ToClients) => {
    if (m.kind === "expect") {
      expect = m.change;
      seen = 0;
      send({ kind: "armed", change: m.change });
      if (streams === 0) send({ kind: "seen", change: m.change, lastAt: wallNow() });
    } else {
      abort.abort();
      for (const q of queues) q.end();
      process.disconnect?.();
      setTimeout(() => process.exit(0), 200).unref();
    }
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [port, streams, services] = process.argv.slice(2).map(Number);
  await main(port as number, streams as number, services as number);
}
