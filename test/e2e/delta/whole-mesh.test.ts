/**
 * A real @grpc/grpc-js client with its DEFAULT limits (4 MiB per received message) subscribes to
 * the ClusterLoadAssignment of every service of a 10,000-service mesh (12 endpoints each: 4.5 MB
 * of ClusterLoadAssignments, about 6 MB as one Delta response), over Delta ADS and over SotW ADS,
 * and receives every resource without error: two responses each, the larger 4,127,636 bytes.
 * Without the response byte budget both streams die with RESOURCE_EXHAUSTED ("Received message
 * that decompresses to a size larger than 4194304").
 *
 * The server is the Node runtime `npm start` runs (startNodeRuntime, in-process, memory store).
 * The mesh is published straight into its store as the flush publishes it (the real EDS generator,
 * toStored, keys.resource): ingesting 20,000 watch events would take ~40 s on this machine. About
 * 9 s in all, 4 of them building the mesh.
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NodeRuntime, startNodeRuntime } from "../../../functions/node/runtime.ts";
import { parseConfig } from "../../../lib/config.ts";
import { ClusterLoadAssignmentSchema } from "../../../lib/gen/envoy/config/endpoint/v3/endpoint_pb.ts";
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DeltaDiscoveryResponse,
  DeltaDiscoveryResponseSchema,
  type DiscoveryRequest,
  DiscoveryRequestSchema,
  type DiscoveryResponse,
  DiscoveryResponseSchema,
} from "../../../lib/gen/envoy/service/discovery/v3/discovery_pb.ts";
import type { Endpoint } from "../../../lib/model/index.ts";
import { endpointGenerator } from "../../../lib/resources/generators/index.ts";
import { toStored } from "../../../lib/resources/version.ts";
import { TypeUrl } from "../../../lib/resources/xds-types.ts";
import { keys } from "../../../lib/store/keys.ts";
import { checkDeltaResponse, checkSotwResponse } from "../../support/xds-check.ts";

const SERVICES = 10_000;
const ENDPOINTS = 12;
const EDS = TypeUrl.endpoint;
const ADS = "/envoy.service.discovery.v3.AggregatedDiscoveryService";
const node = {
  id: "sidecar~10.0.0.9~mesh-watcher.default~default.svc.cluster.local",
  metadata: { GENERATOR: "grpc" },
};
const fourMiB = 4 * 1024 * 1024;

let runtime: NodeRuntime;
let client: grpc.Client;
const names: string[] = [];
let meshBytes = 0;

/** Publishes the CLA of every service as the flush does; returns the total encoded bytes. */
async function publishMesh(rt: NodeRuntime): Promise<number> {
  let bytes = 0;
  for (let s = 0; s < SERVICES; s++) {
    const hostname = `svc-${String(s).padStart(5, "0")}.mesh.svc.cluster.local`;
    const endpoints: Endpoint[] = Array.from({ length: ENDPOINTS }, (_, i) => ({
      address: `10.${Math.floor(s / 250)}.${s % 250}.${i + 1}`,
      port: 9080,
      servicePortName: "grpc",
      labels: { app: `svc-${s}` },
      locality: { region: "r1", zone: `z${i % 3}`, subzone: "" },
      serviceAccount: `spiffe://cluster.local/ns/mesh/sa/svc-${s}`,
      health: "HEALTHY",
    }));
    const generated = endpointGenerator.generate(
      {
        hostname,
        namespace: "mesh",
        services: [
          {
            hostname,
            name: `svc-${s}`,
            namespace: "mesh",
            clusterId: "Kubernetes",
            resolution: "ClientSideLB",
            addresses: [`10.96.${Math.floor(s / 250)}.${s % 250}`],
            ports: [{ name: "grpc", port: 9080, protocol: "GRPC" }],
            labels: {},
          },
        ],
        shards: {
          hostname,
          namespace: "mesh",
          shards: { "Kubernetes/Kubernetes": endpoints },
          serviceAccounts: [],
        },
      },
      { domainSuffix: "cluster.local" },
    );
    for (const g of generated) {
      const stored = await toStored(g, `mesh/${hostname}`);
      await rt.store.put(keys.resource(stored.typeUrl, stored.name), stored);
      names.push(stored.name);
      bytes += stored.body.length;
    }
  }
  return bytes;
}

const serialize =
  <T>(schema: Parameters<typeof toBinary>[0]) =>
  (m: T) =>
    Buffer.from(toBinary(schema, m as never));

beforeAll(async () => {
  const parsed = parseConfig({
    PORT: "0",
    XDS_PORT: "0",
    HOST: "127.0.0.1",
    EDGEPILOT_MAX_NAMES_PER_REQUEST: "20000",
  });
  if (!parsed.ok) throw new Error(parsed.errors.join("; "));
  runtime = await startNodeRuntime(parsed.config, { log: () => {}, shutdownGraceMs: 100 });
  meshBytes = await publishMesh(runtime);
  // Default channel options: grpc.max_receive_message_length is 4 MiB.
  client = new grpc.Client(`127.0.0.1:${runtime.xdsPort}`, grpc.credentials.createInsecure());
}, 60_000);

afterAll(async () => {
  client?.close();
  await runtime?.stop();
});

/** Reads responses until every name arrived (ACKing each), the stream fails, or 20 s pass. */
function collect<Req, Res extends { nonce: string }>(
  call: grpc.ClientDuplexStream<Req, Res>,
  namesOf: (r: Res) => string[],
  ackOf: (r: Res) => Req,
  envoyValid: (r: Res) => void,
): Promise<{ got: Set<string>; responses: number; largest: number; error?: string }> {
  return new Promise((resolve) => {
    const got = new Set<string>();
    let responses = 0;
    let largest = 0;
    const done = (error?: string) => {
      clearTimeout(timer);
      call.cancel();
      resolve({ got, responses, largest, ...(error === undefined ? {} : { error }) });
    };
    const timer = setTimeout(() => done(`timed out with ${got.size} of ${names.length}`), 20_000);
    call.on("data", (r: Res & { $bytes?: number }) => {
      try {
        envoyValid(r);
      } catch (e) {
        return done(String(e));
      }
      responses++;
      largest = Math.max(largest, r.$bytes ?? 0);
      for (const n of namesOf(r)) got.add(n);
      call.write(ackOf(r));
      if (got.size === names.length) done();
    });
    call.on("error", (e: grpc.ServiceError) => {
      if (got.size < names.length) done(`${grpc.status[e.code]}: ${e.details}`);
    });
  });
}

/** A deserializer that also notes the message's size (to show each piece is under 4 MiB). */
function sized<T extends object>(schema: Parameters<typeof fromBinary>[0]) {
  return (b: Buffer) => Object.assign(fromBinary(schema, b) as T, { $bytes: b.length });
}

describe("a 10,000-service whole-mesh EDS subscription, grpc-js with default limits", () => {
  it("the mesh's ClusterLoadAssignments are well over 4 MiB in all", () => {
    expect(names).toHaveLength(SERVICES);
    expect(meshBytes).toBeGreaterThan(fourMiB);
  });

  it("Delta ADS: every resource arrives, in responses under 4 MiB, each ACKed", async () => {
    const call = client.makeBidiStreamRequest(
      `${ADS}/DeltaAggregatedResources`,
      serialize<DeltaDiscoveryRequest>(DeltaDiscoveryRequestSchema),
      sized<DeltaDiscoveryResponse>(DeltaDiscoveryResponseSchema),
    );
    call.write(create(DeltaDiscoveryRequestSchema, { node, typeUrl: EDS, resourceNamesSubscribe: names }));
    const r = await collect(
      call,
      (res) => res.resources.map((x) => x.name),
      (res) => create(DeltaDiscoveryRequestSchema, { typeUrl: EDS, responseNonce: res.nonce }),
      checkDeltaResponse,
    );
    expect(r.error).toBeUndefined();
    expect(r.got.size).toBe(SERVICES);
    expect(r.responses).toBeGreaterThan(1);
    expect(r.largest).toBeLessThan(fourMiB);
  }, 30_000);

  it("SotW ADS: every resource arrives, in responses under 4 MiB, each ACKed", async () => {
    const call = client.makeBidiStreamRequest(
      `${ADS}/StreamAggregatedResources`,
      serialize<DiscoveryRequest>(DiscoveryRequestSchema),
      sized<DiscoveryResponse>(DiscoveryResponseSchema),
    );
    call.write(create(DiscoveryRequestSchema, { node, typeUrl: EDS, resourceNames: names }));
    const r = await collect(
      call,
      (res) => res.resources.map((a) => fromBinary(ClusterLoadAssignmentSchema, a.value).clusterName),
      (res) =>
        create(DiscoveryRequestSchema, {
          typeUrl: EDS,
          versionInfo: res.versionInfo,
          responseNonce: res.nonce,
          resourceNames: names,
        }),
      checkSotwResponse,
    );
    expect(r.error).toBeUndefined();
    expect(r.got.size).toBe(SERVICES);
    expect(r.responses).toBeGreaterThan(1);
    expect(r.largest).toBeLessThan(fourMiB);
  }, 30_000);
});
