/**
 * The initial push to one Envoy sidecar over the wire: the server as `npm start` runs it
 * (npm-start.ts), `services` services ingested through the real ingest POST, then one raw Delta ADS
 * stream posing as a sidecar of the first service's pod subscribes as Envoy does (CDS and LDS
 * wildcard, then EDS for every EDS cluster and RDS for every route name its listeners take), ACKing
 * each response; measured: the time from its first request until it holds the whole set, and the
 * bytes and responses it took. Beside it, in the same run on the same server, the peer: a proxyless
 * gRPC client (GENERATOR=grpc) subscribing the same way to the whole mesh. Prints one JSON line.
 * Run alone: `npx tsx test/bench/sidecar-initial.ts [services]`.
 */
import { create, fromBinary, type MessageInitShape, toBinary } from "@bufbuild/protobuf";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { StatusService } from "../../lib/gen/edgepilot/v1/status_pb.ts";
import { type Cluster, ClusterSchema } from "../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { type Listener, ListenerSchema } from "../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { AggregatedDiscoveryService } from "../../lib/gen/envoy/service/discovery/v3/ads_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  DeltaDiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { edsNames, rdsNames } from "../e2e/sidecar/bookinfo-mesh.ts";
import { requestQueue } from "../e2e/support/request-queue.ts";
import { serviceEvents } from "./mesh.ts";
import { startServer } from "./npm-start.ts";

/** What one proxy's initial push cost. */
export interface InitialPush {
  ms: number;
  bytes: number;
  responses: number;
  resources: Record<"clusters" | "endpoints" | "listeners" | "routes", number>;
}

export interface SidecarInitialReport {
  services: number;
  sidecar: InitialPush;
  /** The peer: a proxyless gRPC client subscribed to the whole mesh on the same server. */
  proxyless: InitialPush;
}

/** Posts the mesh in batches and waits until the server published it (its push version settles). */
async function ingest(port: number, xdsPort: number, services: number): Promise<void> {
  const events = Array.from({ length: services }, (_, n) => serviceEvents(n)).flat();
  for (let at = 0; at < events.length; at += 1000) {
    const res = await fetch(`http://127.0.0.1:${port}/v1/events`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(events.slice(at, at + 1000)),
    });
    if (!res.ok) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  }
  const status = createClient(StatusService, createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }));
  let last = -1n;
  for (let still = 0; still < 5; ) {
    await new Promise((r) => setTimeout(r, 200));
    const v = (await status.getStatus({})).pushVersion;
    still = v === last && v > 0n ? still + 1 : 0;
    last = v;
  }
}

/** One proxy subscribing as Envoy does, until it holds every name it asked for. */
async function initialPush(
  xdsPort: number,
  node: { id: string; metadata: Record<string, unknown> },
): Promise<InitialPush> {
  const proxyless = node.metadata.GENERATOR === "grpc";
  const client = createClient(
    AggregatedDiscoveryService,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${xdsPort}` }),
  );
  const queue = requestQueue<DeltaDiscoveryRequest>();
  const abort = new AbortController();
  const send = (r: MessageInitShape<typeof DeltaDiscoveryRequestSchema>) =>
    queue.push(create(DeltaDiscoveryRequestSchema, r));
  const held = new Map<string, Map<string, Uint8Array>>(
    [TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route].map((t) => [t, new Map()]),
  );
  const asked = { eds: new Set<string>(), rds: new Set<string>() };
  let bytes = 0;
  let responses = 0;
  const started = performance.now();
  send({ typeUrl: TypeUrl.cluster, node: node as never });
  send({ typeUrl: TypeUrl.listener });
  let ms = 0;
  for await (const r of client.deltaAggregatedResources(queue.requests, { signal: abort.signal })) {
    bytes += toBinary(DeltaDiscoveryResponseSchema, r).length;
    responses++;
    const got = held.get(r.typeUrl) as Map<string, Uint8Array>;
    for (const x of r.resources) if (x.resource) got.set(x.name, x.resource.value);
    send({ typeUrl: r.typeUrl, responseNonce: r.nonce });
    if (r.typeUrl === TypeUrl.cluster) {
      const clusters: Cluster[] = [...got.values()].map((b) => fromBinary(ClusterSchema, b));
      const fresh = edsNames(clusters).filter((n) => !asked.eds.has(n));
      for (const n of fresh) asked.eds.add(n);
      if (fresh.length > 0) send({ typeUrl: TypeUrl.endpoint, resourceNamesSubscribe: fresh });
    } else if (r.typeUrl === TypeUrl.listener) {
      // Proxyless listeners are API listeners whose RouteConfiguration has the listener's name.
      const listeners: Listener[] = [...got.values()].map((b) => fromBinary(ListenerSchema, b));
      const names = proxyless ? [...got.keys()] : rdsNames(listeners);
      const fresh = names.filter((n) => !asked.rds.has(n));
      for (const n of fresh) asked.rds.add(n);
      if (fresh.length > 0) send({ typeUrl: TypeUrl.route, resourceNamesSubscribe: fresh });
    }
    const complete = (t: string, names: Set<string>) => [...names].every((n) => held.get(t)?.has(n));
    if (
      asked.eds.size > 0 &&
      asked.rds.size > 0 &&
      complete(TypeUrl.endpoint, asked.eds) &&
      complete(TypeUrl.route, asked.rds)
    ) {
      ms = performance.now() - started;
      break;
    }
  }
  abort.abort();
  queue.close();
  const count = (t: string) => held.get(t)?.size ?? 0;
  return {
    ms: Number(ms.toFixed(1)),
    bytes,
    responses,
    resources: {
      clusters: count(TypeUrl.cluster),
      endpoints: count(TypeUrl.endpoint),
      listeners: count(TypeUrl.listener),
      routes: count(TypeUrl.route),
    },
  };
}

/** Starts the server, ingests the mesh and measures both proxies (see the module comment). */
export async function measureSidecarInitial(services = 1000): Promise<SidecarInitialReport> {
  const server = await startServer("fanout-probe.mjs");
  try {
    await ingest(server.port, server.xdsPort, services);
    // The first service's first pod (test/bench/mesh.ts): the sidecar has an inbound side too.
    const sidecar = await initialPush(server.xdsPort, {
      id: "sidecar~10.0.0.1~svc-0-0.bench~bench.svc.cluster.local",
      metadata: { NAMESPACE: "bench", LABELS: { app: "svc-0" }, CLUSTER_ID: "Kubernetes" },
    });
    const proxyless = await initialPush(server.xdsPort, {
      id: "sidecar~10.0.0.2~svc-0-1.bench~bench.svc.cluster.local",
      metadata: { NAMESPACE: "bench", GENERATOR: "grpc" },
    });
    return { services, sidecar, proxyless };
  } finally {
    await server.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await measureSidecarInitial(Number(process.argv[2] ?? 1000))));
}
