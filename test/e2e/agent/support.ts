/** Helpers for the agent e2e: a raw Delta ADS client that ACKs and records every removal, the mesh as resyncs. */
import { create } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AggregatedDiscoveryService } from "../../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { listOf, resync, untilPushed } from "../restart/support.ts";
import { endpointSlice, pod, service } from "../support/kube.ts";
import { requestQueue } from "../support/request-queue.ts";
import type { RunningControlPlane } from "../support/runtime.ts";

export const CDS = "type.googleapis.com/envoy.config.cluster.v3.Cluster";

/** A Delta stream that subscribes to every cluster, ACKs each response and records what it was told. */
export interface DeltaWatcher {
  /** name ─▶ version of the clusters it holds. */
  held: Map<string, string>;
  /** Every name it was told to remove. */
  removed: string[];
  responses: number;
  error(): string;
  close(): void;
}

/** Opens the watcher on 127.0.0.1:`port` with node `nodeId`. */
export function watchClusters(port: number, nodeId: string): DeltaWatcher {
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${port}` }),
  );
  const queue = requestQueue<DeltaDiscoveryRequest>();
  const abort = new AbortController();
  const w = { held: new Map<string, string>(), removed: [] as string[], responses: 0, failure: "" };
  queue.push(
    create(DeltaDiscoveryRequestSchema, {
      node: { id: nodeId, metadata: { GENERATOR: "grpc" } },
      typeUrl: CDS,
      resourceNamesSubscribe: ["*"],
    }),
  );
  void (async () => {
    try {
      for await (const r of client.deltaAggregatedResources(queue.requests, { signal: abort.signal })) {
        w.responses++;
        for (const res of r.resources) w.held.set(res.name, res.version);
        for (const name of r.removedResources) {
          w.removed.push(name);
          w.held.delete(name);
        }
        queue.push(create(DeltaDiscoveryRequestSchema, { typeUrl: CDS, responseNonce: r.nonce }));
      }
    } catch (e) {
      if (!abort.signal.aborted) w.failure = String(e);
    }
  })();
  return {
    held: w.held,
    removed: w.removed,
    get responses() {
      return w.responses;
    },
    error: () => w.failure,
    close() {
      queue.close();
      abort.abort();
    },
  };
}

/**
 * The whole mesh as resyncs, in the order that once hurt: pods on 127.0.0.1 and .2, then the
 * Services, pushed before reviews' slice (on `reviewsIp`) arrives. A restarted upstream holds
 * reviews' assignment back until its endpoints are heard (lib/push/held-endpoints.ts), so nothing
 * between it and a calling client ever sees it empty.
 */
export async function resyncMesh(
  cp: RunningControlPlane,
  mesh: { services: string[]; reviewsIp: string; backendPort: number },
): Promise<void> {
  const ns = "default";
  await resync(
    cp,
    "Pod",
    listOf("PodList", [pod("reviews", ns, "127.0.0.1"), pod("reviews", ns, "127.0.0.2")]),
  );
  const from = cp.output().length;
  const services = mesh.services.map((n) => service(n, ns, [{ name: "grpc", port: 9080 }]));
  await resync(cp, "Service", listOf("ServiceList", services));
  await untilPushed(cp, from);
  const port = { name: "grpc", port: mesh.backendPort };
  await resync(
    cp,
    "EndpointSlice",
    listOf("EndpointSliceList", [
      endpointSlice("reviews-1", "reviews", ns, port, [{ ip: mesh.reviewsIp, ready: true }]),
    ]),
  );
}

/** Waits until `cond` holds (at most `ms`), or throws naming `what` with `context()`. */
export async function eventually(cond: () => boolean, what: string, context: () => string, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: never happened\n${context()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
