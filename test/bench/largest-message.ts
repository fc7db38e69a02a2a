/**
 * The largest xDS message: a real @grpc/grpc-js client with its DEFAULT limits (4 MiB per
 * received message) subscribes to the whole of a mesh of N Services + N EndpointSlices × E
 * endpoints, ingested through the ingest POST and published by the Node runtime `npm start` runs
 * (in-process, memory store), as a proxyless gRPC client would: CDS and LDS wildcard, then EDS for
 * every cluster and RDS for every listener, over Delta ADS and over SotW ADS, ACKing each response.
 * Per protocol and type: responses, the largest one's bytes and the whole answer's bytes, and any
 * error the client saw. Then a SotW CDS request to a runtime whose EDGEPILOT_MAX_RESPONSE_BYTES is
 * below its answer: a state of the world cannot be split, so the client gets an error naming the
 * limit and the server logs it.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { type NodeRuntime, startNodeRuntime } from "../../functions/node/runtime.ts";
import { parseConfig } from "../../lib/config.ts";
import { ClusterSchema } from "../../lib/gen/envoy/config/cluster/v3/cluster_pb.ts";
import { ClusterLoadAssignmentSchema } from "../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import { ListenerSchema } from "../../lib/gen/envoy/config/listener/v3/listener_pb.ts";
import { RouteConfigurationSchema } from "../../lib/gen/envoy/config/route/v3/route_pb.ts";
import {
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import { TypeUrl } from "../../lib/resources/xds-types.ts";
import { defaultMaxResponseBytes } from "../../lib/xds/budget.ts";
import { ndjsonBatches } from "./ingest-throughput.ts";
import { published } from "./memory.ts";

const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService";
const node = {
  id: "sidecar~10.0.0.9~mesh-watcher.mesh~mesh.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};
/** What grpc-js refuses by default (grpc.max_receive_message_length). */
export const grpcDefaultLimit = 4 * 1024 * 1024;

/** One type's answer to the whole-mesh subscriber. */
export interface MessageRow {
  protocol: "Delta" | "SotW";
  type: string;
  resources: number;
  responses: number;
  largestBytes: number;
  totalBytes: number;
  error?: string;
}

export interface LargestMessageReport {
  services: number;
  endpoints: number;
  /** The server's response byte budget (EDGEPILOT_MAX_RESPONSE_BYTES, its default). */
  budget: number;
  rows: MessageRow[];
  /** SotW CDS under a budget below its answer: what the client got, and the server's log line. */
  tooLarge: { budget: number; clientError: string; logLine: string };
}

async function startRuntime(env: Record<string, string>, log: (line: string) => void): Promise<NodeRuntime> {
  const parsed = parseConfig({
    PORT: "0",
    XDS_PORT: "0",
    HOST: "127.0.0.1",
    EDGEPILOT_MAX_NAMES_PER_REQUEST: "20000",
    EDGEPILOT_MAX_REQUEST_BYTES: String(64 * 1024 * 1024),
    ...env,
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  return startNodeRuntime(parsed.config, { log, shutdownGraceMs: 100 });
}

/** Ingests the mesh through POST /v1/events (NDJSON, 2,000 events a batch) and waits for its publish. */
async function ingestMesh(rt: NodeRuntime, services: number, endpoints: number): Promise<void> {
  for (const { body } of ndjsonBatches(services, endpoints, 2000)) {
    const res = await fetch(`http://127.0.0.1:${rt.port}/v1/events`, {
      method: "POST",
      body,
      headers: { "content-type": "application/x-ndjson" },
    });
    if (res.status !== 200) throw new Error(`ingest answered ${res.status}: ${await res.text()}`);
  }
  await published(rt.xdsPort);
}

/** The name of a SotW resource, read from its bytes. */
function sotwName(typeUrl: string, value: Uint8Array): string {
  if (typeUrl === TypeUrl.cluster) return fromBinary(ClusterSchema, value).name;
  if (typeUrl === TypeUrl.endpoint) return fromBinary(ClusterLoadAssignmentSchema, value).clusterName;
  if (typeUrl === TypeUrl.listener) return fromBinary(ListenerSchema, value).name;
  return fromBinary(RouteConfigurationSchema, value).name;
}

/**
 * One ADS stream subscribing to `names` of `typeUrl` (none: wildcard), reading responses (ACKing
 * each) until `expected` resources arrived, the stream fails, or 30 s pass. Returns the row and
 * the names received.
 */
function subscribe(
  client: grpc.Client,
  protocol: "Delta" | "SotW",
  typeUrl: string,
  names: readonly string[],
  expected: number,
): Promise<MessageRow & { names: string[] }> {
  const delta = protocol === "Delta";
  const call = client.makeBidiStreamRequest(
    `${ADS}/${delta ? "DeltaAggregatedResources" : "StreamAggregatedResources"}`,
    (m: unknown) =>
      Buffer.from(
        delta
          ? toBinary(DeltaDiscoveryRequestSchema, m as never)
          : toBinary(DiscoveryRequestSchema, m as never),
      ),
    (b: Buffer) => ({
      bytes: b.length,
      message: delta ? fromBinary(DeltaDiscoveryResponseSchema, b) : fromBinary(DiscoveryResponseSchema, b),
    }),
  );
  const got = new Set<string>();
  const row: MessageRow = {
    protocol,
    type: typeUrl.slice(typeUrl.lastIndexOf(".") + 1),
    resources: 0,
    responses: 0,
    largestBytes: 0,
    totalBytes: 0,
  };
  return new Promise((resolve) => {
    let over = false;
    const done = (error?: string) => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      call.cancel();
      row.resources = got.size;
      resolve({ ...row, ...(error === undefined ? {} : { error }), names: [...got] });
    };
    const timer = setTimeout(() => done(`timed out with ${got.size} of ${expected}`), 30_000);
    call.on(
      "data",
      ({ bytes, message }: { bytes: number; message: DeltaDiscoveryResponse | DiscoveryResponse }) => {
        row.responses++;
        row.largestBytes = Math.max(row.largestBytes, bytes);
        row.totalBytes += bytes;
        if (delta) {
          const m = message as DeltaDiscoveryResponse;
          for (const r of m.resources) got.add(r.name);
          call.write(create(DeltaDiscoveryRequestSchema, { typeUrl, responseNonce: m.nonce }));
        } else {
          const m = message as DiscoveryResponse;
          for (const a of m.resources) got.add(sotwName(typeUrl, a.value));
          const ack = {
            typeUrl,
            versionInfo: m.versionInfo,
            responseNonce: m.nonce,
            resourceNames: [...names],
          };
          call.write(create(DiscoveryRequestSchema, ack));
        }
        if (got.size >= expected) done();
      },
    );
    call.on("error", (e: grpc.ServiceError) => done(`${grpc.status[e.code]}: ${e.details}`));
    if (delta)
      call.write(create(DeltaDiscoveryRequestSchema, { node, typeUrl, resourceNamesSubscribe: [...names] }));
    else call.write(create(DiscoveryRequestSchema, { node, typeUrl, resourceNames: [...names] }));
  });
}

/** Measures the whole-mesh answers of a `services`-service mesh, then the over-budget SotW CDS error. */
export async function measureLargestMessage(
  services = 10_000,
  endpoints = 10,
): Promise<LargestMessageReport> {
  const rows: MessageRow[] = [];
  const rt = await startRuntime({}, () => {});
  try {
    await ingestMesh(rt, services, endpoints);
    const client = new grpc.Client(`127.0.0.1:${rt.xdsPort}`, grpc.credentials.createInsecure());
    try {
      // EDS and RDS by the names CDS and LDS gave (over SotW too: its LDS may be refused as too large).
      let clusters: string[] = [];
      let listeners: string[] = [];
      for (const protocol of ["Delta", "SotW"] as const) {
        const cds = await subscribe(client, protocol, TypeUrl.cluster, [], services);
        if (clusters.length === 0) clusters = cds.names;
        const eds = await subscribe(client, protocol, TypeUrl.endpoint, clusters, services);
        const lds = await subscribe(client, protocol, TypeUrl.listener, [], services);
        if (listeners.length === 0) listeners = lds.names;
        const rds = await subscribe(client, protocol, TypeUrl.route, listeners, services);
        for (const { names: _, ...row } of [cds, eds, lds, rds]) rows.push(row);
      }
    } finally {
      client.close();
    }
  } finally {
    await rt.stop();
  }
  const cdsBytes = rows.find((r) => r.protocol === "SotW" && r.type === "Cluster")?.largestBytes ?? 0;
  const budget = Math.max(2048, Math.floor(cdsBytes / 2));
  const lines: string[] = [];
  const small = await startRuntime({ EDGEPILOT_MAX_RESPONSE_BYTES: String(budget) }, (l) => lines.push(l));
  let clientError = "";
  try {
    await ingestMesh(small, services, endpoints);
    const client = new grpc.Client(`127.0.0.1:${small.xdsPort}`, grpc.credentials.createInsecure());
    try {
      const r = await subscribe(client, "SotW", TypeUrl.cluster, [], services);
      clientError = r.error ?? "(no error: answered)";
    } finally {
      client.close();
    }
  } finally {
    await small.stop();
  }
  const logLine = lines.find((l) => l.includes("EDGEPILOT_MAX_RESPONSE_BYTES")) ?? "(no log line)";
  return {
    services,
    endpoints,
    budget: defaultMaxResponseBytes,
    rows,
    tooLarge: { budget, clientError, logLine },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [services, endpoints] = process.argv.slice(2).map(Number);
  console.log(JSON.stringify(await measureLargestMessage(services || 10_000, endpoints || 10), null, 1));
}
